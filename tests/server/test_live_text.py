"""The model's words reach the editor as they come (pytest-lsp, real server, a slowly streaming scripted model):
before the step ends, coalesced into a few `text` events, the action markup never shown."""

from __future__ import annotations

import asyncio
import time

import pytest
from scripted_editor import editor_fixtures
from server_editor import scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

THOUGHT = "I will read calc.py first to see how add is written, then decide what to change in it. " * 2
MESSAGE = "Reading the file now."
READ = '<ACTION>{"name": "read_file", "arguments": {"path": "calc.py"}}</ACTION>'
FINISH = (
    '<THOUGHT>done</THOUGHT><ACTION>{"name": "task_complete", "arguments": {"summary": "read it"}}</ACTION>'
)

model, editor = editor_fixtures(
    {"calc.py": "def add(a, b):\n    return a - b\n"},
    lambda m: scripted_settings(m, toolCalling="prompt", liveTextInterval=100),
)


async def test_streamed_words_arrive_before_the_step_ends_without_action_markup(editor, model):
    reply = f"<THOUGHT>{THOUGHT}</THOUGHT>{MESSAGE}\n{READ}"
    model.add_steps([{"content": reply, "chunk_delay": 0.05}, {"content": FINISH}])  # 16 chars every 50 ms
    run_id = await editor.ask("what does add do?")
    started = time.monotonic()
    while not editor.run_events(run_id, "text"):
        assert time.monotonic() - started < 30, editor.run_events(run_id)
        await asyncio.sleep(0.02)
    first_text = time.monotonic()
    kinds = [e["kind"] for e in editor.run_events(run_id)]
    assert "thought" not in kinds and "tool_call" not in kinds  # the step is still streaming
    await editor.wait_event(run_id, "done")
    ended = next(i for i, e in enumerate(editor.run_events(run_id)) if e["kind"] == "tool_call")
    assert time.monotonic() - first_text > 0.3  # the reply took ~0.8 s more to stream after the first words

    texts = [e for e in editor.run_events(run_id)[:ended] if e["kind"] == "text"]
    chunks = len(reply) // 16 + 1
    assert 3 <= len(texts) < chunks  # live, yet coalesced (at most one event per 100 ms, not one per chunk)
    thought = "".join(e["text"] for e in texts if e["channel"] == "thought")
    message = "".join(e["text"] for e in texts if e["channel"] == "message")
    assert thought == THOUGHT and message.strip() == MESSAGE
    assert texts[0]["first"] is True and texts[-1]["final"] is True
    every_text = "".join(e["text"] for e in editor.run_events(run_id, "text"))
    assert "ACTION" not in every_text and "read_file" not in every_text and "task_complete" not in every_text
    (thought_event, *_) = editor.run_events(run_id, "thought")
    assert thought_event["streamed"] is True  # clients need not show it again


async def test_progress_shows_the_last_words_while_the_reply_streams(editor, model):
    model.add_steps([{"content": f"{MESSAGE} Then I stop.\n{FINISH}", "chunk_delay": 0.05}])
    run_id = await editor.ask("say something")
    await editor.wait_event(run_id, "done")
    reports = [
        getattr(p, "message", "") or "" for p in editor.client.progress_reports[f"lsp-agent/run/{run_id}"]
    ]
    assert any(MESSAGE in r for r in reports), reports
    assert not any("ACTION" in r for r in reports)
