"""Per-test line spectra from a test interpreter without coverage.py: the plugin's own tracer (sys.settrace before
Python 3.12, sys.monitoring from 3.12), through the sandbox as the small profile runs it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import test_sandbox_fault_lines
from test_sandbox_fault_lines import BUGGY_LINE, context

from lsp_agent.tools.fault_lines import suspicious_lines
from lsp_agent.tools.test_runs import run_pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins")]
stats_project = test_sandbox_fault_lines.stats_project  # the fixture: clamp() with a one-line bug
PYTEST_PACKAGES = (
    "pytest",
    "_pytest",
    "pluggy",
    "iniconfig",
    "packaging",
    "pygments",
    "py.py",
)  # pure Python
PYENV = Path.home() / ".pyenv" / "versions"


def interpreter_without_coverage(base: Path, where: Path) -> Path | None:
    """A venv of `base` that imports pytest (its own, else this venv's pure-Python one through a .pth file) and
    not coverage; None when that cannot be made."""
    made = subprocess.run([base, "-m", "venv", "--without-pip", "--system-site-packages", where], timeout=120)
    python = where / "bin" / "python"
    if made.returncode != 0 or not python.is_file():
        return None
    if subprocess.run([python, "-c", "import pytest"], capture_output=True, timeout=60).returncode != 0:
        shared = where / "shared-pytest"
        shared.mkdir()
        ours = Path(sysconfig.get_paths()["purelib"])
        for name in PYTEST_PACKAGES:
            if (ours / name).exists():
                (shared / name).symlink_to(ours / name)
        site = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        Path(site, "shared-pytest.pth").write_text(f"{shared}\n")
    probe = subprocess.run(
        [python, "-c", "import pytest, coverage"], capture_output=True, text=True, timeout=60
    )
    if "No module named 'coverage'" not in probe.stderr:
        return None  # pytest is missing, or coverage is there
    return python


def spectra_without_coverage(project: Path, python: Path, tracer: str) -> None:
    """The traced run of the named tests gives the same report as a plain one, and spectra that rank the bug."""
    ctx = context(project, python=str(python))
    traced = run_pytest(ctx, ["tests/test_stats.py"], spectra=True)
    plain = run_pytest(ctx, ["tests/test_stats.py"])
    ctx.close()
    assert traced.counts == plain.counts == "2 failed, 4 passed" and traced.details() == plain.details()
    spectra = traced.spectra
    assert spectra is not None and (spectra.failed, spectra.passed) == (2, 4) and spectra.tracer == tracer
    assert list(spectra.lines) == ["pkg/stats.py"]  # test modules and installed packages are not traced
    assert spectra.lines["pkg/stats.py"][BUGGY_LINE] == (2, 0)  # both failures ran it, no pass did
    ctx = context(project)  # this venv's interpreter, with coverage.py: the spectra are the same
    measured = run_pytest(ctx, ["tests/test_stats.py"], spectra=True).spectra
    assert measured is not None and measured.tracer == "coverage"
    assert (measured.failed, measured.passed, measured.lines) == (
        spectra.failed,
        spectra.passed,
        spectra.lines,
    )
    ctx.close()
    assert [(s.path, s.line, s.score) for s in suspicious_lines(spectra)][:1] == [
        ("pkg/stats.py", BUGGY_LINE, 1.0)
    ]


def test_without_coverage_before_python_3_12_settrace_gives_the_spectra(
    stats_project: Path, tmp_path: Path
) -> None:
    python = interpreter_without_coverage(Path(sys.base_prefix) / "bin" / "python3", tmp_path / "nocov")
    if python is None:
        pytest.skip("no interpreter without coverage.py (and with pytest) can be made from the base one here")
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info >= (3, 12))"], capture_output=True
    )
    if version.stdout.strip() != b"False":
        pytest.skip("the base interpreter is 3.12+: the sys.monitoring test covers it")
    spectra_without_coverage(stats_project, python, "settrace")


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_without_coverage_on_python_3_12_and_later_sys_monitoring_gives_the_spectra(
    stats_project: Path, tmp_path: Path, version: str
) -> None:
    bases = sorted(PYENV.glob(f"{version}.*/bin/python3")) if PYENV.is_dir() else []
    if not bases:
        pytest.skip(f"no Python {version} here")
    python = interpreter_without_coverage(bases[-1], tmp_path / "nocov")
    if python is None:
        pytest.skip(f"no interpreter without coverage.py (and with pytest) can be made from Python {version}")
    spectra_without_coverage(stats_project, python, "monitoring")
