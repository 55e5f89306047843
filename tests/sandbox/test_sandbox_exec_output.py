"""Exec output as it comes: run_command hands a listener the running command's output (redacted, throttled, its
tail) before the command ends, and the model's result is unchanged."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.tools import exec_output
from lsp_agent.tools.exec_output import EXEC_OUTPUT, OutputTail
from lsp_agent.tools.exec_tools import run_command
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

SLOW = "import time\nprint('first line', flush=True)\ntime.sleep(1.5)\nprint('second line')\n"


def test_output_reaches_the_listener_while_the_command_runs(project: Path) -> None:
    heard: list[tuple[float, str]] = []
    ctx = ToolContext(root=project, overlay=Overlay(project), settings=Settings())
    ctx.extras[EXEC_OUTPUT] = lambda text: heard.append((time.monotonic(), text))
    (project / "slow.py").write_text(SLOW)
    started = time.monotonic()
    out = run_command(ctx, ["python3", "slow.py"])
    ended = time.monotonic()
    assert out.startswith("exit status: 0") and "first line" in out and "second line" in out
    early = [(at, text) for at, text in heard if "first line" in text and "second line" not in text]
    assert early and early[0][0] - started < ended - started - 1.0  # heard a second before the end
    assert "second line" in heard[-1][1]  # and everything by the end


def test_without_a_listener_nothing_changes(project: Path) -> None:
    ctx = ToolContext(root=project, overlay=Overlay(project), settings=Settings())
    assert "hello" in run_command(ctx, ["echo", "hello"])


def test_the_tail_is_throttled_redacted_and_in_order(monkeypatch) -> None:
    monkeypatch.setattr(exec_output, "TAIL_CHARS", 20)
    told: list[str] = []
    tail = OutputTail(told.append, lambda text: text.replace("s3cr3t", "[REDACTED:KEY]"))
    for n in range(50):
        tail.add(f"line {n}\n")
    assert len(told) == 1  # the first piece at once, the rest wait for the interval
    time.sleep(0.3)  # the interval's timer tells what came meanwhile
    assert len(told) == 2 and told[-1].endswith("line 49\n") and told[-1].startswith("[... ")
    tail.add("key=s3cr3t\n")
    tail.flush()
    assert "s3cr3t" not in told[-1] and "[REDACTED:KEY]" in told[-1]
    tail.flush()  # nothing new: nothing told
    assert len(told) == 3


def test_a_failing_listener_is_dropped_quietly() -> None:
    calls = threading.Event()

    def broken(_text: str) -> None:
        calls.set()
        raise RuntimeError("gone")

    tail = OutputTail(broken, str)
    tail.add("x")
    time.sleep(0.15)
    tail.add("y")
    tail.flush()
    assert calls.is_set()
