"""`lsp-agent acp` through the real protocol: the SDK's client over stdio, the scripted model over HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import ClientCapabilities, Implementation
from acp_support import NEVER, RecordingClient, acp_agent, agent_env, text_prompt

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.slow

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


async def test_initialize_advertises_capabilities(tmp_path: Path) -> None:
    client = RecordingClient()
    async with acp_agent(client, agent_env(None, tmp_path)) as (conn, _):
        reply = await conn.initialize(
            protocol_version=PROTOCOL_VERSION + 5,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="t", version="1"),
        )
    assert reply.protocol_version == PROTOCOL_VERSION  # a newer client gets our version
    caps = reply.agent_capabilities
    assert caps.load_session and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities.http and caps.mcp_capabilities.sse
    assert reply.agent_info.name == "lsp-agent" and reply.agent_info.version


async def test_approved_edit_is_written_through_the_client(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient(default_answer="allow_once")
    with ScriptedModelServer(fix_script()) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            assert session.modes.current_mode_id == "code"
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 60
            )
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
    assert "Let me look at calc.py." in client.text_of("agent_thought_chunk")
    assert client.text_of("agent_message_chunk") == "fixed add"
    assert reply.usage is not None and reply.usage.total_tokens > 0


async def test_rejected_edit_never_touches_disk_and_the_agent_reads_why(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient(default_answer="reject_once")
    with ScriptedModelServer(fix_script("left it")) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 60
            )
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


async def test_client_write_refuses_a_buffer_changed_while_asking(tmp_path: Path, workspace: Path) -> None:
    path = str(workspace / "calc.py")
    client = RecordingClient()
    client.on_ask = lambda _: client.buffers.update({path: "def add(a, b):\n    return b - a\n"})
    with ScriptedModelServer(fix_script()) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=text_prompt("fix")), 60)
        observation = server.requests[-1]["messages"][-1]["content"]
    assert client.writes == [] and (workspace / "calc.py").read_text() == BUGGY
    assert "changed in the editor or on disk since the agent read it; not written" in observation


async def test_always_answer_is_remembered_in_the_shared_store(tmp_path: Path, workspace: Path) -> None:
    from lsp_agent.agent.permission_store import PermissionStore

    client = RecordingClient(default_answer="allow_always")
    script = fix_script() + [
        {"tool_calls": [call("write_file", path="notes.txt", content="hello\n")]},
        {"tool_calls": [call("task_complete", summary="noted")]},
    ]
    with ScriptedModelServer(script) as server:
        env = agent_env(server, tmp_path)
        async with acp_agent(client, env) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 60
            )
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=text_prompt("note")), 60)
    assert len(client.questions) == 1  # the second edit was not asked about
    assert (workspace / "notes.txt").read_text() == "hello\n"
    import os

    os.environ["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]
    assert [r.key for r in PermissionStore(workspace.resolve()).rules()] == ["edit_files"]


async def test_unsaved_buffer_text_wins_over_disk(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient(buffers={str(workspace / "calc.py"): "def add(a, b):\n    return a * b\n"})
    script = [
        {"tool_calls": [call("read_file", path="calc.py")]},
        {"tool_calls": [call("task_complete", summary="read it")]},
    ]
    with ScriptedModelServer(script) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=text_prompt("read")), 60)
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


async def test_second_prompt_while_running_is_refused(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    script = [{"content": "slow", "delay": 2.0, "tool_calls": [call("task_complete", summary="done")]}]
    with ScriptedModelServer(script) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            first = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("one"))
            )
            await asyncio.sleep(0.5)
            with pytest.raises(RequestError) as err:
                await conn.prompt(session_id=session.session_id, prompt=text_prompt("two"))
            assert "still answering a prompt" in str(err.value)
            assert (await asyncio.wait_for(first, 60)).stop_reason == "end_turn"


async def test_cancel_stops_a_model_request_within_a_second(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    with ScriptedModelServer([{"endless": True}]) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("go"))
            )
            for _ in range(300):  # until the model request streams
                if server.requests:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)
            started = asyncio.get_running_loop().time()
            await conn.cancel(session_id=session.session_id)
            reply = await asyncio.wait_for(prompt, 10)
            elapsed = asyncio.get_running_loop().time() - started
    assert reply.stop_reason == "cancelled"
    assert elapsed < 1.0


async def test_cancel_while_asking_permission_writes_nothing(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient(answers=[NEVER])
    with ScriptedModelServer(fix_script()) as server:
        async with acp_agent(client, agent_env(server, tmp_path)) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix"))
            )
            await asyncio.wait_for(client.asked.wait(), 30)
            await conn.cancel(session_id=session.session_id)
            reply = await asyncio.wait_for(prompt, 10)
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


async def test_iteration_limit_is_max_turn_requests(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    script = [{"tool_calls": [call("read_file", path="calc.py")]}] * 3
    with ScriptedModelServer(script) as server:
        env = agent_env(server, tmp_path, LSP_AGENT_MAX_ITERATIONS="2")
        async with acp_agent(client, env) as (conn, _):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("loop")), 60
            )
    assert reply.stop_reason == "max_turn_requests"
