"""A model-chosen regex inside a run never freezes the language server (real protocol, scripted model)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))  # the editor harness of tests/server
from scripted_editor import editor_fixtures, finish_step, tool_step  # noqa: E402

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

SLOW_FALLBACK = r"(?=a)(a|aa)+$"  # needs the backtracking engine, which stops it after 2 s
EVIL = "a" * 26 + "!\n" + ("a" * 34 + "!\n") * 3

model, editor = editor_fixtures({"evil.txt": EVIL, "app.py": "X = 1\n"})


def search(pattern: str) -> dict:
    """A script step searching the workspace for a regex."""
    return tool_step("search_text", thought="searching", pattern=pattern, regex=True)


async def status_latencies_until(editor, run_id: str, kind: str) -> list[float]:
    """Ask lspAgent.status over and over until the run emits `kind`; the time each answer took."""
    latencies: list[float] = []
    deadline = time.monotonic() + 30
    while not editor.run_events(run_id, kind):
        assert time.monotonic() < deadline, f"no {kind} event"
        started = time.perf_counter()
        await editor.command("lspAgent.status")
        latencies.append(time.perf_counter() - started)
    return latencies


async def test_nested_quantifiers_finish_at_once(editor, model):
    model.add_steps([search("(a+)+$"), finish_step("searched")])
    run_id = await editor.ask("find the a's")
    await editor.wait_event(run_id, "done", timeout=30)
    result = editor.run_events(run_id, "tool_result")[0]
    assert result["name"] == "search_text" and result["output"].startswith("No matches for '(a+)+$'")
    assert result["seconds"] < 1.0, result["seconds"]  # Python's re took ~10 s on the first line alone


async def test_the_server_answers_while_a_backtracking_pattern_runs_and_the_pattern_is_stopped(editor, model):
    model.add_steps([search(SLOW_FALLBACK), finish_step("searched")])
    run_id = await editor.ask("find the a's slowly")
    await editor.wait_event(run_id, "tool_call", timeout=30)
    latencies = await status_latencies_until(editor, run_id, "tool_result")
    result = editor.run_events(run_id, "tool_result")[0]
    assert not result["ok"] and "was stopped after 2 s" in result["output"], result
    assert len(latencies) >= 3 and max(latencies) < 1.0, latencies
    done = await editor.wait_event(run_id, "done", timeout=30)
    assert done["stopReason"] == "complete"


async def test_cancel_is_answered_while_a_backtracking_pattern_runs(editor, model):
    model.add_steps([search(SLOW_FALLBACK)])
    run_id = await editor.ask("search and be cancelled")
    await editor.wait_event(run_id, "tool_call", timeout=30)
    started = time.perf_counter()
    assert (await editor.command("lspAgent.cancel", {"runId": run_id}))["cancelled"] is True
    assert time.perf_counter() - started < 1.0
    done = await editor.wait_event(run_id, "done", timeout=10)
    assert done["stopReason"] == "cancelled"
