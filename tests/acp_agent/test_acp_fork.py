"""session/fork and /fork through the real protocol (the SDK's client against `lsp-agent acp`): a fork continues a
copy of the conversation (whole or up to an exchange) while the source goes on alone, both are listed and stored,
a restarted agent opens a fork, and bad params get errors while the agent stays up."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_support import RecordingClient, SharedAgent, acp_agent, text_prompt

from lsp_agent.agent.conversation.store import ConversationStore

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


def finish(summary: str) -> dict:
    """A script step finishing the task."""
    return {"tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}]}


def store_of(agent: SharedAgent) -> ConversationStore:
    """The conversation store of the spawned agent (its private cache dir)."""
    return ConversationStore(Path(agent.env["XDG_CACHE_HOME"]) / "lsp-agent" / "sessions")


def seen_by_model(request: dict) -> str:
    """Everything the model was sent in one request."""
    return json.dumps(request["messages"])


async def ask(conn, session_id: str, text: str) -> object:
    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=text_prompt(text)), 60)


async def until(predicate, seconds: float = 10.0) -> None:
    """Wait for a condition the agent's notifications bring about."""
    for _ in range(int(seconds * 20)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def two_exchanges(agent: SharedAgent, workspace: Path) -> str:
    """A session of two finished exchanges (FIRST answered ANSWER-ONE, SECOND answered ANSWER-TWO)."""
    agent.script([finish("ANSWER-ONE"), finish("ANSWER-TWO")])
    session_id = await agent.session(workspace)
    await ask(agent.conn, session_id, "FIRST: what does add do?")
    await ask(agent.conn, session_id, "SECOND: and sub?")
    return session_id


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


async def test_fork_continues_a_copy_while_the_source_goes_on_alone(
    agent: SharedAgent, workspace: Path
) -> None:
    client = agent.client()
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    hello = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
    assert hello.agent_capabilities.session_capabilities.fork is not None
    source = await two_exchanges(agent, workspace)
    source_file = store_of(agent).path_of(source)
    stored_before = json.loads(source_file.read_text())["exchanges"]

    whole = await agent.conn.fork_session(session_id=source, cwd=str(workspace))
    cut = await agent.conn.fork_session(session_id=source, cwd=str(workspace), lspAgent={"exchange": 1})
    assert len({source, whole.session_id, cut.session_id}) == 3
    assert {o.id for o in whole.config_options} >= {"model", "mode"} and whole.modes.current_mode_id == "code"
    await until(lambda: len(client.of("session_info_update")) == 3)  # the source's title, then the forks'
    titles = [u.title for u in client.of("session_info_update")]
    assert titles[1:] == ["Fork of FIRST: what does add do?", "Fork at 1 of FIRST: what does add do?"]

    server = agent.script([finish("FORK-REPLY"), finish("CUT-REPLY"), finish("SOURCE-REPLY")])
    await ask(agent.conn, whole.session_id, "THIRD-IN-FORK")
    await ask(agent.conn, cut.session_id, "THIRD-IN-CUT")
    await ask(agent.conn, source, "THIRD-IN-SOURCE")
    in_fork, in_cut, in_source = (seen_by_model(r) for r in server.requests)
    assert "ANSWER-ONE" in in_fork and "ANSWER-TWO" in in_fork
    assert "ANSWER-ONE" in in_cut and "SECOND: and sub?" not in in_cut and "ANSWER-TWO" not in in_cut
    assert "ANSWER-TWO" in in_source
    assert (
        "THIRD-IN-FORK" not in in_source and "FORK-REPLY" not in in_source and "THIRD-IN-CUT" not in in_source
    )

    listed = {s.session_id: s for s in (await agent.conn.list_sessions(cwd=str(workspace))).sessions}
    assert {source, whole.session_id, cut.session_id} <= set(listed)
    assert listed[whole.session_id].title == "Fork of FIRST: what does add do?"
    assert listed[cut.session_id].cwd == str(workspace.resolve())
    stored = json.loads(store_of(agent).path_of(cut.session_id).read_text())
    assert [e["task"] for e in stored["exchanges"]] == ["FIRST: what does add do?", "THIRD-IN-CUT"]
    assert stored["acp"]["forkedFrom"] == {"sessionId": source, "exchange": 1}
    source_now = json.loads(source_file.read_text())["exchanges"]
    assert source_now[:2] == stored_before and [e["task"] for e in source_now][2:] == ["THIRD-IN-SOURCE"]


async def test_bad_fork_requests_are_refused_and_the_agent_stays_up(
    agent: SharedAgent, workspace: Path
) -> None:
    agent.client()
    source = await two_exchanges(agent, workspace)
    stored = sorted(p.name for p in store_of(agent).directory.glob("*.json"))

    with pytest.raises(RequestError, match="unknown session") as unknown:
        await agent.conn.fork_session(session_id="never-was", cwd=str(workspace))
    assert unknown.value.code == -32602
    with pytest.raises(RequestError, match="unknown session"):
        await agent.conn.fork_session(session_id="../../etc/passwd", cwd=str(workspace))

    send = agent.conn._conn.send_request  # raw params the SDK's typed client would not build
    good = {"sessionId": source, "cwd": str(workspace)}
    hostile = [
        ({"sessionId": 5, "cwd": str(workspace)}, "Invalid params"),
        ({"sessionId": source, "cwd": 7}, "Invalid params"),
        ({"sessionId": source}, "Invalid params"),
        ({"sessionId": source, "cwd": "relative/dir"}, "absolute"),
        ({"sessionId": source, "cwd": str(workspace / "missing")}, "not an existing directory"),
        ({"sessionId": source, "cwd": "/"}, "file system root"),
        ({**good, "additionalDirectories": ["relative"]}, "absolute"),
        ({**good, "_meta": {"lspAgent": [1]}}, "must be an object"),
        ({**good, "_meta": {"lspAgent": {"exchange": "2"}}}, "exchange number"),
        ({**good, "_meta": {"lspAgent": {"exchange": -1}}}, "exchange number"),
        ({**good, "_meta": {"lspAgent": {"exchange": True}}}, "exchange number"),
        ({**good, "_meta": {"lspAgent": {"exchange": 10**40}}}, "no exchange 1000000000"),
        ({**good, "_meta": {"lspAgent": {"exchange": 3}}}, "the conversation has exchanges 1 to 2"),
    ]
    for params, message in hostile:
        with pytest.raises(RequestError) as err:
            await asyncio.wait_for(send("session/fork", params), 10)
        assert message in str(err.value) + json.dumps(err.value.data), params
        assert err.value.code in (-32602, -32600), params
    with pytest.raises(RequestError):
        await send("session/fork", [source, str(workspace)])
    assert sorted(p.name for p in store_of(agent).directory.glob("*.json")) == stored  # nothing half-made

    # a `_meta` key named like a field does not replace the field; the agent still serves
    forked = await send("session/fork", {**good, "_meta": {"cwd": "/", "sessionId": "never-was"}})
    assert forked["sessionId"] != source and agent.proc.returncode is None
    server = agent.script([finish("still here")])
    await ask(agent.conn, forked["sessionId"], "still up?")
    assert "ANSWER-TWO" in seen_by_model(server.requests[-1])


async def test_a_fork_made_by_slash_command_opens_after_a_restart(
    agent: SharedAgent, workspace: Path
) -> None:
    client = agent.client()
    source = await two_exchanges(agent, workspace)
    await ask(agent.conn, source, "/fork 1")
    said = client.text_of("agent_message_chunk")
    assert 'Forked exchanges 1 to 1 into a new session "Fork at 1 of FIRST: what does add do?"' in said
    fork_id = said.split('"Fork at 1 of FIRST: what does add do?" (')[1].split(")")[0]
    await ask(agent.conn, source, "/fork 9")
    assert "Not forked: no exchange 9: the conversation has exchanges 1 to 2." in client.text_of(
        "agent_message_chunk"
    )
    await ask(agent.conn, source, "/fork ²")
    assert "is not an exchange number" in client.text_of("agent_message_chunk")
    whole = await agent.conn.fork_session(session_id=source, cwd=str(workspace))

    second = RecordingClient()
    async with acp_agent(second, agent.env) as (conn, _):  # a new process: the editor restarted
        listed = {s.session_id: s.title for s in (await conn.list_sessions(cwd=str(workspace))).sessions}
        assert listed[fork_id] == "Fork at 1 of FIRST: what does add do?"
        assert listed[whole.session_id] == "Fork of FIRST: what does add do?"
        await conn.load_session(cwd=str(workspace), session_id=fork_id, mcp_servers=[])
        replayed = [(u.session_update, u.content.text) for u in second.updates if hasattr(u, "content")]
        server = agent.script([finish("AFTER-RESTART")])
        await ask(conn, fork_id, "THIRD after the restart")
        again = await conn.fork_session(session_id=whole.session_id, cwd=str(workspace))  # a fork of a fork
        assert again.session_id not in (whole.session_id, source)
    assert replayed[:2] == [
        ("user_message_chunk", "FIRST: what does add do?"),
        ("agent_message_chunk", "ANSWER-ONE"),
    ]
    assert "SECOND: and sub?" not in json.dumps(replayed)
    seen = seen_by_model(server.requests[-1])
    assert "ANSWER-ONE" in seen and "ANSWER-TWO" not in seen
