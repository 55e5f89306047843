"""Conversations across server restarts and summarised when they outgrow their budget, through the real protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from server_editor import SERVER_CMD, scripted_settings, server_env, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

SECRET = "sk-live-abcdefghijklmnop"
SUMMARY_REQUEST = "Summarize these earlier exchanges"


def finish(summary: str) -> dict:
    return {"content": "done", "tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}]}


def edit(path: str, old: str, new: str) -> dict:
    call = {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}
    return {"content": f"editing {path}", "tool_calls": [call]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    files = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "notes.py": "X = 1\n",
        ".env": f"OPENAI_API_KEY={SECRET}\n",
    }
    return write_tree(tmp_path / "proj", files)


async def open_editor(root: Path, model: ScriptedModelServer, **settings):
    """The server on `root` with the test's cache (the same one after a restart) and its log in a file."""
    cache = root.parent / "cache"
    log = root.parent / "server.log"
    command = [*SERVER_CMD, "--log-file", str(log)]
    init = {"lspAgent": scripted_settings(model, **settings)}
    return await start_editor(root, cache, init_options=init, command=command)


def store_dir(root: Path) -> Path:
    return root.parent / "cache" / "lsp-agent" / "sessions"


def server_log(root: Path) -> str:
    path = root.parent / "server.log"
    return path.read_text() if path.exists() else ""


async def run(editor, model, task: str, steps: list[dict], **extra) -> str:
    model.add_steps(steps)
    run_id = await editor.ask(task, **extra)
    await editor.wait_event(run_id, "done")
    return run_id


def first_user_message(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def task_message(model: ScriptedModelServer) -> str:
    """The first user message of the newest request."""
    return first_user_message(model.requests[-1])


def summary_requests(model: ScriptedModelServer) -> list[dict]:
    return [r for r in model.requests if first_user_message(r).startswith(SUMMARY_REQUEST)]


# ----- across restarts ------------------------------------------------------------------------------------------


async def test_a_restarted_server_continues_the_conversation_and_new_conversation_keeps_the_old(
    workspace, model
):
    editor = await open_editor(workspace, model)
    await run(
        editor, model, f"why does add subtract? (my key {SECRET} works)", [finish("ANSWER-ONE: a typo")]
    )
    old_id = (await editor.command("lspAgent.conversation", {}))["sessionId"]
    await stop_editor(editor)

    stored = (store_dir(workspace) / f"{old_id}.json").read_text()
    assert "ANSWER-ONE: a typo" in stored and json.loads(stored)["root"] == str(workspace)
    assert SECRET not in stored and "[REDACTED:OPENAI_API_KEY]" in stored

    editor = await open_editor(workspace, model)
    try:
        shown = await editor.command("lspAgent.conversation", {})
        assert shown["sessionId"] == old_id
        assert [e["answer"] for e in shown["exchanges"]] == ["ANSWER-ONE: a typo"]
        await run(editor, model, "and how do I fix it?", [finish("swap the sign")])
        text = task_message(model)
        assert "ANSWER-ONE: a typo" in text and "why does add subtract?" in text
        model.add_steps([finish("swap the sign, again")])
        retried = await editor.command("lspAgent.retry", {})  # the conversation's last ask, after the restart
        await editor.wait_event(retried["runId"], "done")
        assert retried["sessionId"] == old_id and retried["task"] == "and how do I fix it?"

        new_id = (await editor.command("lspAgent.newConversation", {}))["sessionId"]
        assert new_id != old_id
        await run(editor, model, "what was the answer?", [finish("no idea")])
        assert "ANSWER-ONE" not in task_message(model)
    finally:
        await stop_editor(editor)

    assert "ANSWER-ONE: a typo" in (store_dir(workspace) / f"{old_id}.json").read_text()  # the old one stays
    editor = await open_editor(workspace, model)
    try:
        current = await editor.command("lspAgent.conversation", {})
        assert current["sessionId"] == new_id
        assert [e["task"] for e in current["exchanges"]] == ["what was the answer?"]
        old = await editor.command("lspAgent.conversation", {"sessionId": old_id})
        assert len(old["exchanges"]) == 3 and old["exchanges"][1]["retried"] is True
    finally:
        await stop_editor(editor)
    # one store: the terminal's `lsp-agent conversation` shows the editor's current conversation
    env = server_env(workspace.parent / "cache")
    out = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "conversation", "--repo", str(workspace), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout)["id"] == new_id


async def test_a_damaged_store_is_logged_and_the_conversation_starts_empty(workspace, model):
    editor = await open_editor(workspace, model)
    await run(editor, model, "first question", [finish("ANSWER-ONE")])
    session_id = (await editor.command("lspAgent.conversation", {}))["sessionId"]
    await stop_editor(editor)
    path = store_dir(workspace) / f"{session_id}.json"
    path.write_text('{"id": "broken", "exchanges": [')

    editor = await open_editor(workspace, model)
    try:
        shown = await editor.command("lspAgent.conversation", {})
        assert shown["sessionId"] == session_id and shown["exchanges"] == []
        run_id = await run(editor, model, "second question", [finish("fine")])
        assert (await editor.wait_event(run_id, "done"))["success"] is True
        assert "ANSWER-ONE" not in task_message(model)
    finally:
        await stop_editor(editor)
    log = server_log(workspace)
    assert (
        f"conversation store {path} is unreadable" in log
        and f"starting conversation {session_id} empty" in log
    )
    (kept,) = [p for p in path.parent.iterdir() if p.name.startswith(f"{path.name}.damaged")]
    assert kept.read_text() == '{"id": "broken", "exchanges": ['
    assert "second question" in path.read_text()  # the new conversation was saved over the old name


# ----- summaries ------------------------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def small_editor(tmp_path_factory, model):
    """One server whose conversations get 1,000 tokens (a 4,000-token context window); each test starts anew."""
    root = write_tree(
        tmp_path_factory.mktemp("small") / "proj", {"calc.py": "X = 1\n", "notes.py": "X = 1\n"}
    )
    editor = await open_editor(root, model, contextWindow=4000)
    yield editor
    await stop_editor(editor)


def long_answer(n: int) -> str:
    return f"ANSWER-{n}: " + "word " * 330  # about 420 tokens: three exchanges exceed a 1,000-token budget


async def test_a_conversation_over_its_budget_folds_its_oldest_exchanges_into_a_summary(small_editor, model):
    editor = small_editor
    await editor.command("lspAgent.newConversation", {})
    before = len(summary_requests(model))
    await run(editor, model, "why does add subtract?", [finish(long_answer(0))])
    second = await run(editor, model, "bump X", [edit("notes.py", "X = 1", "X = 2"), finish(long_answer(1))])
    await editor.command("lspAgent.rejectEdits", {"runId": second, "reason": "X must stay odd"})
    await run(editor, model, "and mul?", [finish(long_answer(2))])
    assert summary_requests(model)[before:] == []  # within the budget so far
    summary = {
        "match": SUMMARY_REQUEST,
        "content": "SUMMARY-7: add subtracts; X must stay odd (rejected)",
    }
    run_id = await run(editor, model, "so what now?", [summary, finish("ok")])
    (request,) = summary_requests(model)[before:]
    asked = first_user_message(request)
    assert "ANSWER-0" in asked and "ANSWER-1" in asked and "ANSWER-2" not in asked
    assert "Proposed changes: notes.py" in asked and "reason: X must stay odd" in asked
    assert request["model"] == model.requests[-1]["model"] and request["max_tokens"] > 0
    assert not request.get("tools")
    text = task_message(model)
    assert "SUMMARY-7: add subtracts" in text and "ANSWER-2" in text
    assert "ANSWER-0" not in text and "ANSWER-1" not in text
    (event,) = [e for e in editor.run_events(run_id, "context") if e.get("what") == "conversation"]
    assert event["summarized"] is True and event["folded"] == 2
    shown = await editor.command("lspAgent.conversation", {})
    assert shown["summary"]["text"].startswith("SUMMARY-7") and shown["summary"]["exchanges"] == 2
    assert shown["folded"] == 2 and [e["folded"] for e in shown["exchanges"]] == [
        True,
        True,
        False,
        False,
    ]
    assert shown["exchanges"][0]["answer"].startswith("ANSWER-0")  # the view still has them in full
    stored = json.loads((store_dir(editor.root) / f"{shown['sessionId']}.json").read_text())
    assert stored["summary"]["text"].startswith("SUMMARY-7")


async def test_a_failed_summary_falls_back_to_the_marker_and_says_so(small_editor, model):
    editor = small_editor
    await editor.command("lspAgent.newConversation", {})
    before = len(summary_requests(model))
    fail = {"match": SUMMARY_REQUEST, "status": 400, "error": "summaries are refused here"}
    task = "TASK-{} " + "detail " * 170  # long tasks: even the short lines of three exchanges do not fit
    answer = "ANSWER-{}: " + "word " * 380
    await run(editor, model, task.format(0), [finish(answer.format(0))])
    await run(editor, model, task.format(1), [finish(answer.format(1))])
    third = await run(editor, model, task.format(2), [fail, finish(answer.format(2))])
    (event,) = [e for e in editor.run_events(third, "context") if e.get("what") == "conversation"]
    assert event["summarized"] is False and "no summary of the 1 oldest exchanges" in event["status"]
    assert (await editor.wait_event(third, "done"))["success"] is True  # the ask went on
    await run(editor, model, "and now?", [fail, finish("ok")])
    assert len(summary_requests(model)) == before + 2
    text = task_message(model)
    assert "[Conversation compacted: the 1 oldest exchanges were left out" in text
    assert answer.format(2).strip() in text and "Summary of the" not in text
    shown = await editor.command("lspAgent.conversation", {})
    assert shown["summary"] is None and shown["folded"] == 0 and shown["compacted"] == 1
    assert "conversation: no summary of the" in server_log(editor.root)
