"""`lsp-agent acp` through the real protocol: the SDK's client over stdio, the scripted model over HTTP.

Most tests share one agent process and scripted model (the `agent` fixture), each in its own session and folder;
tests that need a differently started agent (no client fs, no model, a short permission timeout) start their own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation
from acp_support import NEVER, RecordingClient, SharedAgent, acp_agent, agent_env, text_prompt

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def call(name: str, **arguments: object) -> dict:
    """A native tool call of a script step."""
    return {"name": name, "arguments": arguments}


def fix_script(answer: str = "fixed add") -> list[dict]:
    """Read calc.py, fix it with edit_file, finish."""
    return [
        {"content": "Let me look at calc.py.", "tool_calls": [call("read_file", path="calc.py")]},
        {"tool_calls": [call("edit_file", path="calc.py", old_text="a - b", new_text="a + b")]},
        {"content": "done", "tool_calls": [call("task_complete", summary=answer)]},
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    return root


async def prompt(agent: SharedAgent, session_id: str, text: str, seconds: float = 60) -> object:
    """session/prompt with one text block, bounded."""
    return await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=text_prompt(text)), seconds)


async def test_initialize_advertises_capabilities(agent: SharedAgent) -> None:
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    reply = await agent.conn.initialize(
        protocol_version=PROTOCOL_VERSION + 5,
        client_capabilities=ClientCapabilities(fs=fs),
        client_info=Implementation(name="t", version="1"),
    )
    assert reply.protocol_version == PROTOCOL_VERSION  # a newer client gets our version
    caps = reply.agent_capabilities
    assert caps.load_session and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities.http and caps.mcp_capabilities.sse
    assert reply.agent_info.name == "lsp-agent" and reply.agent_info.version


async def test_approved_edit_is_written_through_the_client(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client(default_answer="allow_once")
    agent.script(fix_script())
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert session.modes.current_mode_id == "code"
    reply = await prompt(agent, session.session_id, "fix add")
    assert reply.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == FIXED
    assert client.writes == [str(workspace / "calc.py")]  # through fs/write_text_file, not behind the editor
    assert str(workspace / "calc.py") in client.reads  # reads go through the client too
    (question,) = client.questions
    (diff,) = question.content
    assert diff.type == "diff" and diff.path == str(workspace / "calc.py")
    assert diff.old_text == BUGGY and diff.new_text == FIXED
    assert question.locations[0].line == 2
    starts = client.of("tool_call")
    assert [(s.kind, s.title) for s in starts] == [("read", "Read calc.py"), ("edit", "Edit calc.py")]
    assert starts[0].locations[0].path == str(workspace / "calc.py")
    ends = client.of("tool_call_update")
    assert [e.status for e in ends] == ["completed", "completed"]
    assert any(c.type == "diff" for c in ends[1].content)  # the card keeps the approved diff
    # the model's words stream as the message; the task_complete summary ends it
    assert client.text_of("agent_message_chunk") == "Let me look at calc.py.done\n\nfixed add"
    kinds = [u.session_update for u in client.updates]
    assert kinds.index("agent_message_chunk") < kinds.index("tool_call")
    assert reply.usage is not None and reply.usage.total_tokens > 0


async def test_rejected_edit_never_touches_disk_and_the_agent_reads_why(
    agent: SharedAgent, workspace: Path
) -> None:
    client = agent.client(default_answer="reject_once")
    server = agent.script(fix_script("left it"))
    reply = await prompt(agent, await agent.session(workspace), "fix add")
    observation = server.requests[-1]["messages"][-1]["content"]
    assert reply.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == BUGGY
    assert client.writes == []
    assert "the user rejected it" in observation and "unchanged" in observation
    assert client.of("tool_call_update")[1].status == "failed"


async def test_disk_fallback_refuses_a_file_changed_while_asking(tmp_path: Path, workspace: Path) -> None:
    """Without client fs, an approved edit goes to disk with ask --apply's stale-file check."""
    target = workspace / "calc.py"
    client = RecordingClient(on_ask=lambda _: target.write_text(BUGGY + "# edited by hand\n"))
    with ScriptedModelServer(fix_script()) as server:
        async with acp_agent(client, agent_env(server, tmp_path), fs=False) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix")), 60
            )
        observation = server.requests[-1]["messages"][-1]["content"]
    assert reply.stop_reason == "end_turn"
    assert target.read_text() == BUGGY + "# edited by hand\n"
    assert "changed on disk since the agent read it" in observation
    assert client.writes == [] and client.reads == []  # the client offered no fs methods


async def test_client_write_refuses_a_buffer_changed_while_asking(
    agent: SharedAgent, workspace: Path
) -> None:
    path = str(workspace / "calc.py")
    client = agent.client()
    client.on_ask = lambda _: client.buffers.update({path: "def add(a, b):\n    return b - a\n"})
    server = agent.script(fix_script())
    await prompt(agent, await agent.session(workspace), "fix")
    observation = server.requests[-1]["messages"][-1]["content"]
    assert client.writes == [] and (workspace / "calc.py").read_text() == BUGGY
    assert "changed in the editor or on disk since the agent read it; not written" in observation


async def test_always_answer_is_remembered_in_the_shared_store(
    agent: SharedAgent, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_agent.agent.consent.store import PermissionStore

    client = agent.client(default_answer="allow_always")
    agent.script(
        fix_script()
        + [
            {"tool_calls": [call("write_file", path="notes.txt", content="hello\n")]},
            {"tool_calls": [call("task_complete", summary="noted")]},
        ]
    )
    session_id = await agent.session(workspace)
    await prompt(agent, session_id, "fix add")
    await prompt(agent, session_id, "note")
    assert len(client.questions) == 1  # the second edit was not asked about
    assert (workspace / "notes.txt").read_text() == "hello\n"
    monkeypatch.setenv("XDG_CONFIG_HOME", agent.env["XDG_CONFIG_HOME"])
    assert [r.key for r in PermissionStore(workspace.resolve()).rules()] == ["edit_files"]


async def test_unsaved_buffer_text_wins_over_disk(agent: SharedAgent, workspace: Path) -> None:
    agent.client(buffers={str(workspace / "calc.py"): "def add(a, b):\n    return a * b\n"})
    server = agent.script(
        [
            {"tool_calls": [call("read_file", path="calc.py")]},
            {"tool_calls": [call("task_complete", summary="read it")]},
        ]
    )
    await prompt(agent, await agent.session(workspace), "read")
    observation = server.requests[-1]["messages"][-1]["content"]
    assert "a * b" in observation and "a - b" not in observation


async def test_bad_requests_get_clear_errors_and_the_process_stays_up(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    async with acp_agent(client, agent_env(None, tmp_path)) as (conn, proc):
        for cwd, words in (
            ("relative/dir", "absolute"),
            (str(workspace / "missing"), "not an existing directory"),
        ):
            with pytest.raises(RequestError) as err:
                await conn.new_session(cwd=cwd, mcp_servers=[])
            assert words in str(err.value) and err.value.code == -32602
        with pytest.raises(RequestError) as err:
            await conn.prompt(session_id="nope", prompt=text_prompt("hi"))
        assert "unknown session" in str(err.value) and "session/new" in str(err.value)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as err:  # no model configured: the hint says where to set one
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("hi"))
        assert "LSP_AGENT_MODEL" in str(err.value)
        with pytest.raises(RequestError) as err:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        assert "ask, code, plan" in str(err.value)
        assert proc.returncode is None


async def test_second_prompt_while_running_is_refused(agent: SharedAgent, workspace: Path) -> None:
    agent.client()
    agent.script([{"content": "slow", "delay": 2.0, "tool_calls": [call("task_complete", summary="done")]}])
    session_id = await agent.session(workspace)
    first = asyncio.ensure_future(prompt(agent, session_id, "one"))
    await asyncio.sleep(0.5)
    with pytest.raises(RequestError) as err:
        await agent.conn.prompt(session_id=session_id, prompt=text_prompt("two"))
    assert "still answering a prompt" in str(err.value)
    assert (await first).stop_reason == "end_turn"


async def test_cancel_stops_a_model_request_within_a_second(agent: SharedAgent, workspace: Path) -> None:
    agent.client()
    server = agent.script([{"endless": True}])
    session_id = await agent.session(workspace)
    running = asyncio.ensure_future(prompt(agent, session_id, "go"))
    for _ in range(300):  # until the model request streams
        if server.requests:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    started = asyncio.get_running_loop().time()
    await agent.conn.cancel(session_id=session_id)
    reply = await asyncio.wait_for(running, 10)
    elapsed = asyncio.get_running_loop().time() - started
    assert reply.stop_reason == "cancelled"
    assert elapsed < 1.0


async def test_cancel_while_asking_permission_writes_nothing(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client(answers=[NEVER])
    agent.script(fix_script())
    session_id = await agent.session(workspace)
    running = asyncio.ensure_future(prompt(agent, session_id, "fix"))
    await asyncio.wait_for(client.asked.wait(), 30)
    await agent.conn.cancel(session_id=session_id)
    reply = await asyncio.wait_for(running, 10)
    assert reply.stop_reason == "cancelled"
    assert (workspace / "calc.py").read_text() == BUGGY


async def test_unanswered_permission_times_out_as_reject_once(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient(answers=[NEVER])
    with ScriptedModelServer(fix_script("gave up")) as server:
        env = agent_env(server, tmp_path, LSP_AGENT_PERMISSION_TIMEOUT="1")
        async with acp_agent(client, env) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix")), 60
            )
        observation = server.requests[-1]["messages"][-1]["content"]
    assert reply.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == BUGGY
    assert "the user rejected it" in observation


async def test_iteration_limit_is_max_turn_requests(agent: SharedAgent, workspace: Path) -> None:
    (workspace / ".env").write_text("LSP_AGENT_MAX_ITERATIONS=2\n")  # the folder's settings
    agent.client()
    agent.script([{"tool_calls": [call("read_file", path="calc.py")]}] * 3)
    reply = await prompt(agent, await agent.session(workspace), "loop")
    assert reply.stop_reason == "max_turn_requests"
