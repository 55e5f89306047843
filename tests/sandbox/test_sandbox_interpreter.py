"""The persistent interpreter: state across steps, errors as tracebacks, timeouts restart it, files join the overlay."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.sandbox.session import Sandbox
from lsp_agent.workspace.overlay import Overlay


def test_state_survives_between_steps_and_errors(project: Path, overlay: Overlay) -> None:
    with Sandbox(project, memory_mib=512) as box:
        run = box.interpreter(overlay, timeout=10).execute
        first = run("principal = 15000\nrate = 0.06\nprincipal * (1 + rate / n)", overlay)
        assert not first.ok
        assert "NameError: name 'n' is not defined" in first.format(10)
        second = run(
            "n = 2\nt = 6\namount = principal * (1 + rate / n) ** (n * t)\nprint(f'{amount:.2f}')", overlay
        )
        assert second.ok and second.stdout.strip() == "21386.41"
        third = run("round(amount - principal, 2)", overlay)
        assert third.value == "6386.41"
        bomb = box.interpreter(overlay, timeout=10).execute("x = bytearray(8 * 1024**3)", overlay)
        assert "MemoryError" in (bomb.error or "")
        assert box.interpreter(overlay, timeout=10).execute("print(n * t)", overlay).stdout.strip() == "12"


def test_timeout_kills_and_restarts_without_state(project: Path, overlay: Overlay) -> None:
    with Sandbox(project) as box:
        box.interpreter(overlay, timeout=1).execute("kept = 1", overlay)
        stuck = box.interpreter(overlay, timeout=1).execute("while True: pass", overlay)
        assert stuck.timed_out
        assert "every variable was lost" in stuck.format(1)
        after = box.interpreter(overlay, timeout=1).execute("print('kept' in globals())", overlay)
        assert after.stdout.strip() == "False"


def test_files_written_by_a_step_become_overlay_writes(project: Path, overlay: Overlay) -> None:
    with Sandbox(project) as box:
        step = box.interpreter(overlay, timeout=10).execute(
            "import pathlib\npathlib.Path('pkg/calc.py').write_text('def add(a, b):\\n    return a + b\\n')\n"
            "import subprocess\nsubprocess.run(['echo', 'from a child process'])\nexit(3)",
            overlay,
        )
        assert step.changes.written == ["pkg/calc.py"]
        assert "from a child process" in step.stderr
        assert "exit() is ignored" in (step.error or "")
    assert overlay.read_text("pkg/calc.py").endswith("return a + b\n")
    assert (project / "pkg" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_code_cannot_read_the_protocol(project: Path, overlay: Overlay) -> None:
    with Sandbox(project) as box:
        run = box.interpreter(overlay, timeout=10).execute
        step = run(
            "import subprocess, sys\nprint(repr(sys.stdin.read()))\nsubprocess.run(['cat'])\nvalue = 41",
            overlay,
        )
        assert step.stdout.strip() == "''"
        assert run("value + 1", overlay).value == "42"  # the next request still reached the interpreter
