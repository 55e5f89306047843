"""Events, session persistence and the terminal permission prompt."""

from __future__ import annotations

import io
import sys

import pytest

from lsp_agent.agent.events import EVENT_KINDS, AgentEvent
from lsp_agent.cli.ask import terminal_asker
from lsp_agent.cli.printer import Printer


def test_event_to_dict_is_flat():
    event = AgentEvent("tool_call", "r1", {"name": "read_file", "arguments": {"path": "a.py"}})
    assert event.to_dict() == {
        "runId": "r1",
        "kind": "tool_call",
        "name": "read_file",
        "arguments": {"path": "a.py"},
    }


def test_event_text_is_compact():
    result = AgentEvent(
        "tool_result",
        "r",
        {"name": "read_file", "ok": True, "seconds": 0.01, "output": "\n".join(map(str, range(10)))},
    )
    text = result.to_text()
    assert text.startswith("<- read_file ok") and "(7 more lines)" in text
    call = AgentEvent(
        "tool_call", "r", {"name": "write_file", "arguments": {"path": "a", "content": "x" * 500}}
    )
    assert len(call.to_text()) < 140
    plan = AgentEvent(
        "plan",
        "r",
        {"subtasks": [{"id": 1, "description": "a"}, {"id": 2, "description": "b", "dependencies": [1]}]},
    )
    assert "2. b after 1" in plan.to_text()
    for kind in EVENT_KINDS:
        assert AgentEvent(kind, "r", {}).to_text()
    with pytest.raises(ValueError, match="unknown event kind 'tool_reslt'"):
        AgentEvent("tool_reslt", "r", {})


def test_printer_colours_only_when_asked():
    out = io.StringIO()
    Printer(out, color=False)(AgentEvent("thought", "r", {"text": "hmm"}))
    Printer(out, color=True)(AgentEvent("thought", "r", {"text": "hmm"}))
    plain, coloured = out.getvalue().splitlines()
    assert plain == "thought: hmm" and coloured == "\033[36mthought: hmm\033[0m"


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("y\n", "allow_once"),
        ("a\n", "allow_always"),
        ("n\n", "reject_once"),
        ("r\n", "reject_always"),
        ("\n", "reject_once"),
        ("", "dismissed"),
    ],
)
async def test_terminal_asker(monkeypatch, typed, answer):
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    out = io.StringIO()
    assert await terminal_asker(out)("run_tests", {"target": "unit"}, "runs code on your machine") == answer
    assert "run_tests(target='unit') runs code on your machine" in out.getvalue()
