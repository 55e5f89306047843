"""ACP v1 sessions through the real protocol (the SDK's client against `lsp-agent acp`): session/list over the store
the CLI and the editor share, resume without replay, close, delete, titles, config options (model, mode, reasoning
effort), additionalDirectories."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp_support import SharedAgent, text_prompt

from lsp_agent.agent.conversation.memory import Exchange
from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.store import ConversationStore

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


def finish(summary: str) -> dict:
    """A script step finishing the task."""
    return {"tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}]}


def store_of(agent: SharedAgent) -> ConversationStore:
    """The conversation store of the spawned agent (its private cache dir)."""
    return ConversationStore(Path(agent.env["XDG_CACHE_HOME"]) / "lsp-agent" / "sessions")


async def delete(agent: SharedAgent, session_id: str) -> object:
    """session/delete (the SDK's client has no method for it: sent as a plain request on its connection)."""
    return await agent.conn._conn.send_request("session/delete", {"sessionId": session_id})


def cli_ask(agent: SharedAgent, workspace: Path, task: str) -> None:
    """`lsp-agent ask` in `workspace` against the scripted model (it saves its conversation in the store)."""
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "ask", "--repo", str(workspace), task],
        env=agent.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


async def test_list_resume_close_delete_sessions_of_every_front_end(
    agent: SharedAgent, workspace: Path
) -> None:
    server = agent.script([finish("it subtracts")])
    await asyncio.to_thread(cli_ask, agent, workspace, "Why does add subtract?")
    cli_id = store_of(agent).current_id(workspace)
    assert cli_id is not None
    editor = Session("editor-conversation", [Exchange("r1", "Rename add to plus", "renamed", "complete")])
    store_of(agent).save(editor, root=workspace, front_end="lsp")  # as the language server saves them

    client = agent.client()
    server = agent.script([finish("fixed")])
    acp_id = await agent.session(workspace)
    await agent.conn.prompt(
        session_id=acp_id, prompt=text_prompt("Fix the subtraction in calc.py\nthen test it")
    )
    infos = client.of("session_info_update")
    assert [i.title for i in infos] == ["Fix the subtraction in calc.py"] and infos[0].updated_at

    listed = await agent.conn.list_sessions(cwd=str(workspace))
    titles = {s.session_id: s.title for s in listed.sessions}
    assert titles == {
        acp_id: "Fix the subtraction in calc.py",
        cli_id: "Why does add subtract?",
        "editor-conversation": "Rename add to plus",
    }
    assert all(s.cwd == str(workspace) and s.updated_at for s in listed.sessions)
    made_by = {s.session_id: s.field_meta["lspAgent"]["frontEnd"] for s in listed.sessions}
    assert made_by == {acp_id: "acp", cli_id: "cli", "editor-conversation": "lsp"}
    assert listed.sessions[0].session_id == acp_id  # newest first
    everywhere = await agent.conn.list_sessions()
    assert (
        len(everywhere.sessions) > 3
    )  # the warm-up session of another folder is listed without a cwd filter

    # resume the CLI's conversation: no history replayed, and the model sees the earlier exchange
    client = agent.client()
    server = agent.script([finish("it was a minus sign")])
    resumed = await agent.conn.resume_session(session_id=cli_id, cwd=str(workspace))
    assert {o.id for o in resumed.config_options} >= {"model", "mode"}
    await agent.conn.prompt(session_id=cli_id, prompt=text_prompt("And now?"))
    kinds = [u.session_update for u in client.updates]
    assert "user_message_chunk" not in kinds[: kinds.index("agent_message_chunk")]
    assert "Why does add subtract?" in json.dumps(server.requests[-1]["messages"])

    await agent.conn.close_session(session_id=cli_id)
    with pytest.raises(RequestError, match="unknown session"):
        await agent.conn.prompt(session_id=cli_id, prompt=text_prompt("still there?"))
    with pytest.raises(RequestError, match="no active session"):
        await agent.conn.close_session(session_id=cli_id)

    for session_id in (cli_id, "editor-conversation", acp_id):
        await delete(agent, session_id)
        assert not store_of(agent).path_of(session_id).exists()
    assert (await agent.conn.list_sessions(cwd=str(workspace))).sessions == []
    with pytest.raises(RequestError, match="unknown session"):
        await delete(agent, acp_id)
    with pytest.raises(RequestError, match="unknown session"):
        await agent.conn.resume_session(session_id=acp_id, cwd=str(workspace))
    with pytest.raises(RequestError, match="unknown session"):
        await delete(agent, "../../etc/passwd")


async def test_close_cancels_a_running_prompt(agent: SharedAgent, workspace: Path) -> None:
    agent.client()
    agent.script([{"content": "thinking " * 200, "chunk_delay": 0.2}, finish("late")])
    session_id = await agent.session(workspace)
    prompt = asyncio.ensure_future(
        agent.conn.prompt(session_id=session_id, prompt=text_prompt("take your time"))
    )
    await asyncio.sleep(1.0)
    await asyncio.wait_for(agent.conn.close_session(session_id=session_id), 5)
    assert (await asyncio.wait_for(prompt, 5)).stop_reason == "cancelled"
    resumed = await agent.conn.resume_session(session_id=session_id, cwd=str(workspace))  # still stored
    assert resumed.config_options


async def test_list_pages_with_a_cursor(agent: SharedAgent, tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    store = store_of(agent)
    for n in range(120):
        store.save(Session(f"many-{n:03d}", [Exchange(f"r{n}", f"task {n}")]), root=folder, front_end="cli")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await agent.conn.list_sessions(cwd=str(folder), cursor=cursor)
        seen.extend(s.session_id for s in page.sessions)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3 and sorted(seen) == [f"many-{n:03d}" for n in range(120)] and len(set(seen)) == 120
    with pytest.raises(RequestError, match="invalid cursor"):
        await agent.conn.list_sessions(cwd=str(folder), cursor="not-a-cursor")
    with pytest.raises(RequestError, match="absolute"):
        await agent.conn.list_sessions(cwd="relative/path")


async def test_a_model_picked_through_a_config_option_gets_the_next_request(
    agent: SharedAgent, workspace: Path
) -> None:
    (workspace / ".env").write_text("LSP_AGENT_MODELS=openai/scripted-large,openai/o3-mini\n")
    client = agent.client()
    created = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    model = next(o for o in created.config_options if o.id == "model")
    assert model.current_value == "openai/scripted" and model.category == "model"
    assert [c.value for c in model.options] == ["openai/scripted", "openai/scripted-large", "openai/o3-mini"]
    assert "reasoning_effort" not in {
        o.id for o in created.config_options
    }  # litellm: scripted does not reason

    server = agent.script([finish("big"), finish("small")])
    await agent.conn.set_config_option(
        config_id="model", session_id=created.session_id, value="openai/scripted-large"
    )
    await agent.conn.prompt(session_id=created.session_id, prompt=text_prompt("hello"))
    assert server.requests[-1]["model"] == "scripted-large"

    answer = await agent.conn.set_config_option(
        config_id="model", session_id=created.session_id, value="openai/o3-mini"
    )
    effort = next(o for o in answer.config_options if o.id == "reasoning_effort")
    assert effort.category == "thought_level" and effort.current_value == "default"
    await agent.conn.set_config_option(
        config_id="reasoning_effort", session_id=created.session_id, value="high"
    )
    server = agent.script([finish("thought hard")])
    await agent.conn.prompt(session_id=created.session_id, prompt=text_prompt("think"))
    assert server.requests[-1]["model"] == "o3-mini" and server.requests[-1]["reasoning_effort"] == "high"

    with pytest.raises(RequestError, match="not offered"):
        await agent.conn.set_config_option(
            config_id="model", session_id=created.session_id, value="openai/gpt-4o"
        )
    # the legacy mode and the mode option agree, each way
    await agent.conn.set_session_mode(session_id=created.session_id, mode_id="plan")
    update = client.of("config_option_update")[-1]
    assert next(o for o in update.config_options if o.id == "mode").current_value == "plan"
    await agent.conn.set_config_option(config_id="mode", session_id=created.session_id, value="ask")
    assert client.of("current_mode_update")[-1].current_mode_id == "ask"

    resumed = await agent.conn.resume_session(session_id=created.session_id, cwd=str(workspace))
    current = {o.id: o.current_value for o in resumed.config_options}
    assert current == {"model": "openai/o3-mini", "mode": "ask", "reasoning_effort": "high"}


async def test_additional_directories_are_read_folders(
    agent: SharedAgent, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "api"
    other.mkdir()
    (other / "notes.txt").write_text("the api folder's note\n")
    agent.client()
    server = agent.script(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "@api/notes.txt"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "@api/new.txt", "content": "x"}}]},
            finish("read it"),
        ]
    )
    created = await agent.conn.new_session(
        cwd=str(workspace), mcp_servers=[], additional_directories=[str(other)]
    )
    await agent.conn.prompt(session_id=created.session_id, prompt=text_prompt("read the api note"))
    sent = json.dumps(server.requests[1]["messages"])
    assert "the api folder's note" in sent
    assert not (other / "new.txt").exists()
    listed = await agent.conn.list_sessions(cwd=str(workspace))
    assert listed.sessions[0].additional_directories == [str(other.resolve())]
    with pytest.raises(RequestError, match="not an existing directory"):
        await agent.conn.new_session(
            cwd=str(workspace), mcp_servers=[], additional_directories=[str(tmp_path / "x")]
        )


PROMPTS_SERVER = Path(__file__).parent / "servers" / "prompts_server.py"


async def until(predicate, seconds: float = 60.0) -> None:
    """Wait for a condition the agent's notifications bring about."""
    for _ in range(int(seconds * 20)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_mcp_prompts_become_slash_commands_once_their_server_starts(
    agent: SharedAgent, workspace: Path
) -> None:
    from acp.schema import McpServerStdio

    client = agent.client()
    server = agent.script([finish("reviewed"), finish("summarized")])
    review = McpServerStdio(name="review", command=sys.executable, args=[str(PROMPTS_SERVER)], env=[])
    session_id = await agent.session(workspace, mcp_servers=[review])

    def names() -> list[list[str]]:
        return [[c.name for c in u.available_commands] for u in client.of("available_commands_update")]

    await until(lambda: len(names()) >= 2)
    assert names()[0] == ["plan", "reindex", "status", "rewind"]  # at once, before the server is up
    assert names()[-1] == ["plan", "reindex", "status", "rewind", "review__review", "review__standup"]
    command = next(
        c for c in client.of("available_commands_update")[-1].available_commands if c.name == "review__review"
    )
    assert "MCP prompt of review" in command.description and command.input.root.hint == "path=... [focus=...]"

    await agent.conn.prompt(session_id=session_id, prompt=text_prompt("/review__review calc.py"))
    assert "Review calc.py for bugs; list each problem with its line." in json.dumps(
        server.requests[-1]["messages"]
    )
    await agent.conn.prompt(
        session_id=session_id, prompt=text_prompt('/review__review path=calc.py focus="style"')
    )
    assert "Review calc.py for style" in json.dumps(server.requests[-1]["messages"])
    requests = len(server.requests)
    await agent.conn.prompt(session_id=session_id, prompt=text_prompt("/review__review focus=red"))
    assert "missing path; usage: /review__review path=... [focus=...]" in client.text_of(
        "agent_message_chunk"
    )
    assert len(server.requests) == requests  # a usage error reaches no model
    assert len(names()) == 2  # the commands did not change: no new update
