"""ACP sessions through the real protocol: modes, slash commands, session/load after a restart, client MCP servers,
resources in the prompt."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp import resource_block, resource_link_block, text_block
from acp.helpers import embedded_text_resource
from acp.schema import McpServerStdio
from acp_support import RecordingClient, SharedAgent, acp_agent, agent_env, text_prompt

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
WRITE_OR_RUN = {"write_file", "edit_file", "delete_file", "run_command", "run_python", "run_tests"}

NOTES_SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "notes_server.py"


def call(name: str, **arguments: object) -> dict:
    """A native tool call of a script step."""
    return {"name": name, "arguments": arguments}


def finish(summary: str) -> dict:
    """A script step finishing the task."""
    return {"tool_calls": [call("task_complete", summary=summary)]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


async def until(predicate, seconds: float = 10.0) -> None:
    """Wait for a condition the agent's notifications bring about."""
    for _ in range(int(seconds * 20)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_ask_mode_offers_only_read_tools_and_never_edits(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client(default_answer="allow_once")
    server = agent.script(
        [
            {"tool_calls": [call("edit_file", path="calc.py", old_text="a - b", new_text="a + b")]},
            {"tool_calls": [call("read_file", path="calc.py")]},
            finish("it subtracts"),
        ]
    )
    session_id = await agent.session(workspace)
    await agent.conn.set_session_mode(session_id=session_id, mode_id="ask")
    await until(lambda: client.of("current_mode_update"))
    reply = await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=text_prompt("why?")), 60)
    offered = {t["function"]["name"] for t in server.requests[0].get("tools", [])}
    first_user = server.requests[0]["messages"][1]["content"]
    edit_observation = server.requests[1]["messages"][-1]["content"]
    assert client.of("current_mode_update")[0].current_mode_id == "ask"
    assert reply.stop_reason == "end_turn"
    assert {"read_file", "search_text", "task_complete"} <= offered and not offered & WRITE_OR_RUN
    assert "Ask mode" in first_user  # the model is told up front
    assert "unknown tool 'edit_file'" in edit_observation  # a model that calls it anyway edits nothing
    assert client.questions == [] and client.writes == []
    assert "a - b" in (workspace / "calc.py").read_text()
    await agent.conn.set_session_mode(session_id=session_id, mode_id="code")  # code mode offers them again
    agent.script([finish("ok")])
    await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=text_prompt("and?")), 60)
    assert {"edit_file", "run_command"} <= {t["function"]["name"] for t in server.requests[0]["tools"]}


async def test_plan_mode_streams_plan_entries(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client()
    plan = {"subtasks": [{"id": 1, "description": "read calc.py"}, {"id": 2, "description": "explain it"}]}
    agent.script(
        [
            {"content": json.dumps(plan)},
            {"tool_calls": [call("read_file", path="calc.py")]},
            finish("read it"),
            finish("it subtracts"),
            {"content": "calc.add subtracts."},
        ]
    )
    session_id = await agent.session(workspace)
    await agent.conn.set_session_mode(session_id=session_id, mode_id="plan")
    reply = await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=text_prompt("explain")), 60
    )
    assert reply.stop_reason == "end_turn"
    plans = client.of("plan")
    assert [e.content for e in plans[0].entries] == ["read calc.py", "explain it"]
    assert [e.status for e in plans[0].entries] == ["pending", "pending"]
    assert [e.status for e in plans[-1].entries] == ["completed", "completed"]
    assert any(e.status == "in_progress" for p in plans for e in p.entries)
    assert "subtasks" not in client.text_of("agent_message_chunk")  # the plan's JSON is not streamed as text


async def test_slash_commands_are_announced_and_answered(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    async with acp_agent(client, agent_env(None, tmp_path)) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await until(lambda: client.of("available_commands_update"))
        names = [c.name for c in client.of("available_commands_update")[0].available_commands]
        assert names == ["plan", "reindex", "status", "rewind", "fork"]
        reply = await conn.prompt(session_id=session.session_id, prompt=text_prompt("/reindex"))
        assert reply.stop_reason == "end_turn"
        await until(lambda: "Workspace index: ready" in client.text_of("agent_message_chunk"))
        await conn.prompt(session_id=session.session_id, prompt=text_prompt("/status"))
        await until(lambda: "mode: Code" in client.text_of("agent_message_chunk"))
    text = client.text_of("agent_message_chunk")
    assert "model: not configured" in text and f"in {workspace.resolve()}" in text


async def test_session_load_after_a_restart_replays_the_history(agent: SharedAgent, workspace: Path) -> None:
    agent.client()
    server = agent.script(
        [
            {"content": "Reading.", "tool_calls": [call("read_file", path="calc.py")]},
            {"content": "It subtracts b from a, so add is wrong.", "tool_calls": []},
            finish("still subtracts"),
        ]
    )
    session_id = await agent.session(workspace)
    await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=text_prompt("what does add do?")), 60
    )
    await agent.conn.set_session_mode(session_id=session_id, mode_id="ask")
    second = RecordingClient()
    async with acp_agent(second, agent.env) as (conn, _):  # a new process: the editor restarted
        loaded = await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        replayed = list(second.updates)
        await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=text_prompt("and now?")), 60)
    follow_up = server.requests[-1]["messages"][1]["content"]
    assert loaded.modes.current_mode_id == "ask"
    kinds = [u.session_update for u in replayed]
    assert kinds[:3] == ["user_message_chunk", "agent_message_chunk", "tool_call"]
    assert replayed[0].content.text == "what does add do?"
    assert replayed[1].content.text == "Reading."  # a streamed reply is replayed whole, not per token
    assert kinds[-1] == "agent_message_chunk" and "usage_update" not in kinds
    assert replayed[-1].content.text == "It subtracts b from a, so add is wrong."
    assert "It subtracts b from a" in follow_up  # the agent remembers the earlier exchange


async def test_load_of_an_unknown_session_is_a_clear_error(agent: SharedAgent, workspace: Path) -> None:
    from acp import RequestError

    with pytest.raises(RequestError) as err:
        await agent.conn.load_session(cwd=str(workspace), session_id="never-was", mcp_servers=[])
    assert "unknown session" in str(err.value)
    assert agent.proc.returncode is None


async def test_mcp_server_passed_by_the_client_asks_and_answers(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client(default_answer="allow_once")
    server = agent.script([{"tool_calls": [call("notes__lookup_note", topic="deploy")]}, finish("Tuesdays")])
    notes = McpServerStdio(name="notes", command=sys.executable, args=[str(NOTES_SERVER)], env=[])
    session_id = await agent.session(workspace, mcp_servers=[notes])
    reply = await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=text_prompt("deploys?")), 90
    )
    tools = [t["function"]["name"] for t in server.requests[0].get("tools", [])]
    observation = server.requests[-1]["messages"][-1]["content"]
    assert reply.stop_reason == "end_turn"
    assert "notes__lookup_note" in tools
    (question,) = client.questions
    assert question.title.startswith("notes: lookup_note")
    assert "Tuesdays" in observation


async def test_resources_in_the_prompt_become_context(agent: SharedAgent, workspace: Path) -> None:
    agent.client(buffers={str(workspace / "calc.py"): "def add(a, b):\n    return a - b  # unsaved\n"})
    prompt = [
        text_block("explain these"),
        resource_link_block("calc.py", (workspace / "calc.py").as_uri()),
        resource_block(embedded_text_resource("file:///elsewhere/spec.md", "add must add")),
    ]
    server = agent.script([finish("explained")])
    session_id = await agent.session(workspace)
    await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=prompt), 60)
    user = server.requests[0]["messages"][1]["content"]
    assert "explain these" in user
    assert "# unsaved" in user  # the linked file's editor text, read through the client
    assert "add must add" in user and "/elsewhere/spec.md" in user
