"""The run's one event channel: front-ends see each fact once, the transcript and the log are sinks of the same events,
and the proposal's Python files are checked once."""

from __future__ import annotations

import json
import logging

import pytest
from agent_support import call, done, run_script

from lsp_agent.agent.events import TRACE_KINDS, AgentEvent, RunEvents
from lsp_agent.agent.loop import results
from lsp_agent.agent.loop.tool_step import EVENT_OUTPUT_CHARS


async def test_front_ends_get_public_events_and_the_transcript_keeps_the_long_form(workspace, tmp_path):
    big = "".join(f"line {i:05d} of a long module\n" for i in range(400))  # ~12,000 characters
    (workspace / "big.txt").write_text(big)
    path = tmp_path / "t.jsonl"
    script = [
        {"content": "reading", "tool_calls": [call("read_file", path="big.txt")]},
        {
            "content": "",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
        },
        done("fixed add"),
    ]
    o = await run_script(workspace, script, transcript=str(path))
    assert not set(TRACE_KINDS) & set(o.kinds)  # requests and model errors are for the records only
    (read, *_) = o.of("tool_result")
    assert len(read["output"]) <= EVENT_OUTPUT_CHARS + 4 and read["output"].endswith("\n...")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    tools = [r for r in records if r["type"] == "tool"]
    assert "line 00399 of a long module" in tools[0]["output"]  # whole in the transcript
    assert tools[0]["arguments"] == {"path": "big.txt"}
    # one record per event of the same fact
    assert len(tools) == len(o.of("tool_result")) == 3
    assert len([r for r in records if r["type"] == "reply"]) == len(o.of("usage")) == 3
    # the proposal is announced before done, and done says it awaits consent
    assert o.kinds.index("proposal") < o.kinds.index("done") == len(o.kinds) - 1
    (finished,) = o.of("done")
    assert finished["pending"] is True and finished["stopReason"] == "complete"
    assert records[-1]["type"] == "done" and records[-1]["stop_reason"] == "complete"


async def test_the_log_is_a_sink_of_the_same_events(workspace, caplog):
    script = [{"content": "", "tool_calls": [call("list_files")]}, done()]
    with caplog.at_level(logging.DEBUG, logger="lsp_agent.agent.loop.run"):
        o = await run_script(workspace, script, max_iterations=5)
    lines = [r.getMessage() for r in caplog.records if r.name == "lsp_agent.agent.loop.run"]
    run_id = o.run.run_id
    assert any(line.startswith(f"run {run_id}: model openai/scripted, native tool calling") for line in lines)
    assert f"run {run_id}: iteration 2 of 5, 4 messages" in lines
    assert f"run {run_id}: model request 2 (4 messages)" in lines
    assert any(line.startswith("tool list_files({}) ok in ") for line in lines)
    assert any(line.startswith("reply in ") for line in lines)


async def test_a_model_error_that_ends_the_run_is_recorded_once(workspace, tmp_path):
    path = tmp_path / "t.jsonl"
    o = await run_script(workspace, [{"status": 401, "error": "bad key"}], transcript=str(path))
    assert o.result.stop_reason == "error" and "bad key" in (o.result.error or "")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["start", "request", "model_error", "done"]
    assert records[2]["kind"] == "auth"
    (error,) = o.of("error")  # the front-end hears the run's end once, not the record
    assert error["message"] == o.result.error


async def test_changed_files_are_checked_once_per_state_of_the_proposal(workspace, monkeypatch):
    checked: list[list[str]] = []
    real = results.syntax_errors

    def counting(changes):
        checked.append([c.path for c in changes])
        return real(changes)

    monkeypatch.setattr(results, "syntax_errors", counting)
    script = [
        {
            "content": "",
            "tool_calls": [call("write_file", path="pkg/new.py", content="def ok():\n    pass\n")],
        },
        done("added"),
    ]
    o = await run_script(workspace, script)
    # the check before finishing serves the proposal event too: the overlay did not change in between
    assert checked == [["pkg/new.py"]]
    assert o.of("proposal")[0]["syntaxErrors"] == [] and o.result.success


def test_a_failing_sink_is_logged_and_the_records_still_get_the_event(caplog):
    recorded: list[AgentEvent] = []

    def broken(event: AgentEvent) -> None:
        raise RuntimeError("sink down")

    events = RunEvents("r1", broken, [recorded.append])
    with caplog.at_level(logging.ERROR):
        events.emit("thought", text="hmm", iteration=1)
        events.emit("request", model="m", messages=[], tools=[], number=1, step=1, steps=1)
    assert [e.kind for e in recorded] == ["thought", "request"]
    assert "event sink failed on thought" in caplog.text and "on request" not in caplog.text
    with pytest.raises(ValueError, match="unknown event kind"):
        events.emit("requets")
