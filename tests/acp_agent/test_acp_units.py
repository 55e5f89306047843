"""The ACP front-end's pure parts: events to updates, prompt parsing, diff lines, the shared index pool."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import resource_block, resource_link_block, text_block
from acp.helpers import embedded_text_resource

from lsp_agent.acp.permissions import first_changed_line
from lsp_agent.acp.turns import parse_prompt
from lsp_agent.acp.updates import TurnTranslator, tool_kind, tool_title
from lsp_agent.acp.workspace import IndexPool
from lsp_agent.agent.events import AgentEvent
from lsp_agent.config import Settings
from lsp_agent.workspace.proposal import FileChange


def event(kind: str, **data: object) -> AgentEvent:
    return AgentEvent(kind, "run", dict(data))


def test_tool_kinds_and_titles() -> None:
    assert [tool_kind(n) for n in ("read_file", "edit_file", "delete_file", "search_text", "run_tests")] == [
        "read",
        "edit",
        "delete",
        "search",
        "execute",
    ]
    assert tool_kind("web__fetch_url") == "fetch" and tool_kind("notes__lookup_note") == "other"
    assert tool_title("read_file", {"path": "a.py", "start_line": 10}) == "Read a.py:10"
    assert tool_title("run_command", {"argv": ["pytest", "-q"]}) == "Run `pytest -q`"
    assert tool_title("notes__lookup_note", {}) == "notes: lookup_note"


def test_a_final_answer_is_sent_once_as_the_message(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t")
    assert translator.translate(event("thought", text="The answer is 4.")) == []
    (message,) = translator.translate(event("done", answer="The answer is 4."))
    assert message.session_update == "agent_message_chunk" and message.content.text == "The answer is 4."


def test_reasoning_before_a_tool_call_is_a_thought_and_search_hits_are_locations(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    translator = TurnTranslator(tmp_path, "t")
    translator.translate(event("thought", text="Look for x."))
    thought, start = translator.translate(event("tool_call", name="search_text", arguments={"pattern": "x"}))
    assert thought.session_update == "agent_thought_chunk" and start.kind == "search"
    (end,) = translator.translate(
        event("tool_result", name="search_text", ok=True, output="a.py:1: x = 1\nb.py:2: y")
    )
    assert end.status == "completed" and end.tool_call_id == start.tool_call_id
    assert [(loc.path, loc.line) for loc in end.locations] == [
        (str(tmp_path / "a.py"), 1)
    ]  # b.py does not exist


def test_task_complete_is_not_a_tool_card(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t")
    assert translator.translate(event("tool_call", name="task_complete", arguments={"summary": "ok"})) == []
    assert translator.translate(event("tool_result", name="task_complete", ok=True, output="ok")) == []


def test_plan_entries_follow_subtasks(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t")
    (plan,) = translator.translate(
        event("plan", subtasks=[{"id": 1, "description": "a"}, {"id": 2, "description": "b"}])
    )
    assert [e.status for e in plan.entries] == ["pending", "pending"]
    (update,) = translator.translate(event("subtask", id=2, status="failed"))
    assert [(e.content, e.status) for e in update.entries] == [("a", "pending"), ("b (failed)", "completed")]


def test_parse_prompt_separates_text_links_and_embedded_resources(tmp_path: Path) -> None:
    parsed = parse_prompt(
        [
            text_block("explain"),
            resource_link_block("a.py", (tmp_path / "a b.py").as_uri()),
            resource_link_block("doc", "https://example.com/doc"),
            resource_block(embedded_text_resource("file:///x/spec.md", "must add")),
        ]
    )
    assert parsed.text == "explain"
    assert parsed.links == [str(tmp_path / "a b.py")]
    assert any("https://example.com/doc" in c for c in parsed.context)
    assert any("must add" in c and "/x/spec.md" in c for c in parsed.context)


def test_first_changed_line() -> None:
    assert first_changed_line(FileChange("a", "modify", "a\nb\nc\n", "a\nB\nc\n")) == 2
    assert first_changed_line(FileChange("a", "modify", "a\n", "a\nb\n")) == 2
    assert first_changed_line(FileChange("a", "create", None, "x\n")) == 1


async def test_one_index_per_folder_shared_by_sessions(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    pool = IndexPool()
    first = pool.start(tmp_path, Settings())
    again = pool.start(tmp_path, Settings())
    assert again is first and again.task is first.task
    index = await pool.get(tmp_path, timeout=60)
    assert index is not None and pool.describe(tmp_path) == "ready (1 files)"
    pool.start(tmp_path, Settings(), force=True)  # /reindex refreshes the same index
    assert await pool.get(tmp_path, timeout=60) is index
    await asyncio.sleep(0)


def test_litellm_logs_never_reach_stdout_the_protocol_channel(capsys) -> None:
    import logging

    from lsp_agent.agent.model.client import get_litellm

    get_litellm()
    logger = logging.getLogger("LiteLLM")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        logger.info("LiteLLM completion() model= scripted")
        logger.debug("more detail")
    finally:
        logger.setLevel(level)
    assert capsys.readouterr().out == ""
