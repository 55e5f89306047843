"""Which Python runs: the workspace's venv, the python setting, or the server's own, named in the result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import copy_mode_isolation

from lsp_agent.config import Settings
from lsp_agent.sandbox.python_env import choose_python
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.tools.exec_tools import run_command, run_python, run_tests
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

PREFIX = "import sys; print('prefix', sys.prefix)"


def make_venv(path: Path, *, system_site_packages: bool) -> Path:
    """A real virtual environment (no pip: fast); with the system site-packages it has this pytest."""
    flags = ["--system-site-packages"] if system_site_packages else []
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", *flags, str(path)], check=True, timeout=120
    )
    return path


def context(project: Path, **settings: object) -> ToolContext:
    """A tool context over `project` with its own overlay."""
    return ToolContext(root=project, overlay=Overlay(project), settings=Settings(**settings))


@pytest.fixture(autouse=True)
def _no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the tiny project needs no plugins: faster


def test_the_workspace_venv_runs_code_and_tests(project: Path) -> None:
    venv = make_venv(project / ".venv", system_site_packages=True)
    ctx = context(project)
    out = run_python(ctx, PREFIX)
    assert f"prefix {venv}" in out
    assert f"python: {venv}/bin/python (the workspace's .venv/; Python {sys.version.split()[0]})" in out
    # activated: a bare `python` on PATH is the venv's too
    assert f"prefix {venv}" in run_command(ctx, ["python", "-c", PREFIX])
    tests = run_tests(ctx)
    assert tests.startswith("exit status: 1") and "1 failed" in tests  # the tiny project's add() is wrong
    assert "python:" not in tests  # the sandbox was described in the run's first exec result only
    tests = run_tests(context(project))  # a new run: described again, with the venv that runs the tests
    assert "1 failed" in tests and f"python: {venv}/bin/python" in tests


def test_a_venv_without_pytest_gets_a_hint(project: Path) -> None:
    venv = make_venv(project / "venv", system_site_packages=False)
    out = run_tests(context(project))
    assert "No module named pytest" in out
    assert f"Hint: {venv}/bin/python has no pytest" in out


def test_the_python_setting_wins_and_a_bad_one_is_named(project: Path, tmp_path: Path) -> None:
    make_venv(project / ".venv", system_site_packages=True)
    other = make_venv(tmp_path / "tools-env", system_site_packages=True)
    out = run_python(context(project, python=str(other)), PREFIX)  # a venv directory is accepted too
    assert f"prefix {other}" in out and f"python: {other}/bin/python (the python setting" in out
    out = run_python(context(project, python="no/such/python"), PREFIX)
    assert f"prefix {project / '.venv'}" in out  # falls back to the workspace's venv, and says why
    assert "NOTE: the python setting 'no/such/python' is not an executable file" in out


def test_without_a_venv_the_servers_python_runs(project: Path) -> None:
    out = run_python(context(project), PREFIX)
    assert f"prefix {sys.prefix}" in out
    assert f"python: {sys.executable} (the language server's own; no .venv/ or venv/" in out
    assert choose_python(project, "python3").source == "setting"  # a command name is looked up on PATH


def test_the_codeact_interpreter_is_the_workspace_python_too(project: Path) -> None:
    venv = make_venv(project / ".venv", system_site_packages=False)
    overlay = Overlay(project)
    with Sandbox(project, memory_mib=512) as box:
        step = box.interpreter(overlay, timeout=20).execute("import sys\nsys.prefix", overlay)
        assert step.ok and step.value == repr(str(venv))


def test_a_copied_scratch_workspace_leaves_the_venv_out(project: Path) -> None:
    venv = make_venv(project / "venv", system_site_packages=False)
    overlay = Overlay(project)
    with Sandbox(project, isolation=copy_mode_isolation(), memory_mib=512) as box:
        code = (
            "import os, sys\n"
            "try:\n    open('venv/planted.txt', 'w')\nexcept OSError as exc:\n    print(exc.strerror.replace(' ', '-'))\n"
            "print(os.path.isfile('venv/pyvenv.cfg'), os.path.isfile('pkg/calc.py'), sys.prefix)"
        )
        result = box.run([box.python().executable, "-c", code], overlay, timeout=20)
        assert not (box.scratch.workspace / "venv" / "pyvenv.cfg").exists()  # not copied
        if box.isolation.namespace:  # shown in place, read-only
            assert result.stdout.split() == ["Read-only-file-system", "True", "True", str(venv)], (
                result.format(20)
            )
        else:
            assert result.stdout.split()[-3:] == ["False", "True", str(venv)], result.format(20)
        assert result.changes.is_empty()
        assert not (venv / "planted.txt").exists()
