"""A model-chosen regex inside a run never freezes the language server (real protocol, scripted model)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import pytest_asyncio

from lsp_agent.testing.scripted_model import ScriptedModelServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))  # the editor harness of tests/server
from server_editor import scripted_settings, start_editor, stop_editor, write_tree  # noqa: E402

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

SLOW_FALLBACK = r"(?=a)(a|aa)+$"  # needs the backtracking engine, which stops it after 2 s
EVIL = "a" * 26 + "!\n" + ("a" * 34 + "!\n") * 3


def search(pattern: str) -> dict:
    return {
        "content": "searching",
        "tool_calls": [{"name": "search_text", "arguments": {"pattern": pattern, "regex": True}}],
    }


def finish() -> dict:
    return {
        "content": "done",
        "tool_calls": [{"name": "task_complete", "arguments": {"summary": "searched"}}],
    }


@pytest.fixture(scope="module")
def model():
    with ScriptedModelServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "proj", {"evil.txt": EVIL, "app.py": "X = 1\n"})
    ed = await start_editor(
        root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": scripted_settings(model)}
    )
    yield ed
    await stop_editor(ed)


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
    model.add_steps([search("(a+)+$"), finish()])
    run_id = await editor.ask("find the a's")
    await editor.wait_event(run_id, "done", timeout=30)
    result = editor.run_events(run_id, "tool_result")[0]
    assert result["name"] == "search_text" and result["output"].startswith("No matches for '(a+)+$'")
    assert result["seconds"] < 1.0, result["seconds"]  # Python's re took ~10 s on the first line alone


async def test_the_server_answers_while_a_backtracking_pattern_runs_and_the_pattern_is_stopped(editor, model):
    model.add_steps([search(SLOW_FALLBACK), finish()])
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
