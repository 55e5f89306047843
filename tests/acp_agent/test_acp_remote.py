"""`lsp-agent acp --listen`: the SDK's own clients over WebSocket (and Streamable HTTP) on 127.0.0.1 against a real
agent process and the scripted model; the bearer token (forced on loopback with --require-token) and the Origin
check refuse what they must."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import websockets
from acp import PROTOCOL_VERSION, connect_to_agent, spawn_agent_process
from acp.http.client import create_http_stream
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation
from acp.ws.client import create_websocket_stream
from acp_support import RecordingClient, agent_env, text_prompt
from test_acpx import NODE, NPM, SCRIPT
from test_acpx import acpx as acpx_installed  # noqa: F401 - the fixture installing acpx from the registry

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TOKEN = "s3cret-token-for-tests"


def call(name: str, **arguments: object) -> dict:
    """A native tool call of a script step."""
    return {"name": name, "arguments": arguments}


FIX = [
    {"content": "Reading.", "tool_calls": [call("read_file", path="calc.py")]},
    {"tool_calls": [call("edit_file", path="calc.py", old_text="a - b", new_text="a + b")]},
    {"content": "done", "tool_calls": [call("task_complete", summary="fixed add")]},
]


@dataclass
class Listening:
    """A running `lsp-agent acp --listen 127.0.0.1:0`: its process, URL and stderr so far."""

    proc: subprocess.Popen
    url: str
    stderr: list[str] = field(default_factory=list)

    @property
    def http_url(self) -> str:
        return self.url.replace("ws://", "http://")


@contextlib.contextmanager
def listening(env: dict[str, str], cwd: Path, *flags: str) -> Iterator[Listening]:
    """Start the agent on a free loopback port and wait for its "listening on" line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "acp", "--listen", "127.0.0.1:0", *flags],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    started = threading.Event()

    def read_stderr() -> None:  # all along, so a chatty log never fills the pipe
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "listening on" in line:
                started.set()
        started.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        started.wait(120)
        match = re.search(r"listening on (ws://\S+)", "".join(lines))
        assert match, f"the agent did not start: {''.join(lines)}"
        yield Listening(proc, match.group(1), lines)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()
        reader.join(5)


@contextlib.asynccontextmanager
async def ws_client(
    url: str, client: RecordingClient, headers: dict[str, str] | None = None
) -> AsyncIterator:
    """The SDK's client connection over its WebSocket transport, initialized with client fs."""
    transport = await create_websocket_stream(url, headers=headers)
    conn = connect_to_agent(client, transport)
    try:
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(fs=fs),
                client_info=Implementation(name="remote-tests", version="1"),
            ),
            30,
        )
        yield conn
    finally:
        await conn.close()


@dataclass
class Remote:
    """A listener shared by a module's tests, with the scripted model it answers from (None: no model)."""

    agent: Listening
    server: ScriptedModelServer | None

    def script(self, steps: list[dict]) -> ScriptedModelServer:
        """The scripted model, answering this test's steps (earlier requests forgotten)."""
        assert self.server is not None, "this listener has no model"
        self.server.reset(steps)
        return self.server


@contextlib.contextmanager
def shared(home: Path, model: bool, *flags: str, **extra: str) -> Iterator[Remote]:
    """One listener (and scripted model) for several tests: each opens its own connection and session, so sharing
    the process tests the same thing while paying its start (and the model library's warm-up) once."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(ScriptedModelServer([])) if model else None
        yield Remote(stack.enter_context(listening(agent_env(server, home, **extra), home, *flags)), server)


@pytest.fixture(scope="module")
def open_listener(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listening]:
    """No model, no token (loopback's default)."""
    with shared(tmp_path_factory.mktemp("open"), False) as remote:
        yield remote.agent


@pytest.fixture(scope="module")
def guarded_listener(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listening]:
    """No model; the token from the environment, required on loopback; INFO logs."""
    flags = ("--require-token", "--log-level", "INFO")
    with shared(tmp_path_factory.mktemp("guarded"), False, *flags, LSP_AGENT_ACP_TOKEN=TOKEN) as remote:
        yield remote.agent


@pytest.fixture(scope="module")
def token_remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    """The scripted model; the token from the environment, required on loopback."""
    home = tmp_path_factory.mktemp("token")
    with shared(home, True, "--require-token", LSP_AGENT_ACP_TOKEN=TOKEN) as remote:
        yield remote


@pytest.fixture(scope="module")
def open_remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    """The scripted model, no token."""
    with shared(tmp_path_factory.mktemp("open-remote"), True) as remote:
        yield remote


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    return root


async def test_sdk_client_runs_a_turn_over_websocket_with_the_token(
    token_remote: Remote, workspace: Path
) -> None:
    client = RecordingClient(default_answer="allow_once")
    token_remote.script(FIX)
    agent = token_remote.agent
    async with ws_client(agent.url, client, {"Authorization": f"Bearer {TOKEN}"}) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 300
        )
    again = RecordingClient()  # a new connection (the editor reconnects) picks the session up
    async with ws_client(agent.url, again, {"Authorization": f"Bearer {TOKEN}"}) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    assert "fixed add" in again.text_of("agent_message_chunk")  # replayed from the store
    assert reply.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == FIXED
    assert client.writes == [str(workspace / "calc.py")]  # fs/write_text_file came back over the socket
    assert len(client.questions) == 1  # the permission question too
    assert "fixed add" in client.text_of("agent_message_chunk")
    assert TOKEN not in "".join(agent.stderr)


async def test_a_client_without_the_right_token_is_refused(
    guarded_listener: Listening, tmp_path: Path
) -> None:
    agent = guarded_listener
    for headers in (None, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await create_websocket_stream(agent.url, headers=headers)
        assert refused.value.response.status_code == 401
        assert b"Bearer" in refused.value.response.body
    async with httpx.AsyncClient() as http:  # Streamable HTTP: the same check
        reply = await http.post(agent.http_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
        assert reply.status_code == 401 and reply.headers["www-authenticate"].startswith("Bearer")
    async with ws_client(agent.url, RecordingClient(), {"Authorization": f"Bearer {TOKEN}"}) as conn:
        assert (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
    log = "".join(agent.stderr)
    assert "refused a websocket connection" in log and TOKEN not in log


async def test_a_generated_token_is_printed_once_and_works(tmp_path: Path) -> None:
    with listening(agent_env(None, tmp_path), tmp_path, "--require-token") as agent:
        (token,) = re.findall(r"Bearer (\S+)'", "".join(agent.stderr))
        assert len(token) >= 32
        async with ws_client(agent.url, RecordingClient(), {"Authorization": f"Bearer {token}"}):
            pass
        with pytest.raises(websockets.InvalidStatus):
            await create_websocket_stream(agent.url)
    assert "".join(agent.stderr).count(token) == 1


async def test_a_web_page_cannot_drive_the_agent_on_loopback(open_listener: Listening) -> None:
    agent = open_listener
    with pytest.raises(websockets.InvalidStatus) as refused:
        await create_websocket_stream(agent.url, headers={"Origin": "https://evil.example"})
    assert refused.value.response.status_code == 403
    async with ws_client(agent.url, RecordingClient()):  # no token on loopback by default
        pass


async def test_hostile_frames_are_answered_and_the_connection_lives(open_listener: Listening) -> None:
    async with websockets.connect(open_listener.url) as socket:
        for frame, code in [("[]", -32600), ("null", -32600), ("{bad", -32700), (b"\xff", -32700)]:
            await socket.send(frame)
            reply = json.loads(await asyncio.wait_for(socket.recv(), 10))
            assert (reply["id"], reply["error"]["code"]) == (None, code)
        init = {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"protocolVersion": 1}}
        await socket.send(json.dumps(init))
        assert json.loads(await asyncio.wait_for(socket.recv(), 10))["result"]["protocolVersion"] == 1
        new = {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        }
        await socket.send(json.dumps(new))
        assert "file system root" in json.loads(await socket.recv())["error"]["message"]


async def test_sdk_client_runs_a_turn_over_streamable_http(open_remote: Remote, workspace: Path) -> None:
    client = RecordingClient(default_answer="allow_once")
    open_remote.script(FIX)
    conn = connect_to_agent(client, create_http_stream(open_remote.agent.http_url))
    try:
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs)
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 300
        )
    finally:
        await conn.close()
    assert reply.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == FIXED
    assert "fixed add" in client.text_of("agent_message_chunk")


async def test_interrupt_stops_the_listener_at_once(tmp_path: Path) -> None:
    with listening(agent_env(None, tmp_path), tmp_path) as agent:
        async with ws_client(agent.url, RecordingClient()) as conn:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            start = time.monotonic()
            agent.proc.send_signal(signal.SIGTERM)
            agent.proc.wait(10)
            took = time.monotonic() - start
    assert took < 2.0, f"took {took:.2f} s"
    assert agent.proc.returncode == 130  # the exit hooks ran (a bare SIGTERM death would be -15)


async def test_an_editor_drives_the_remote_agent_through_the_stdio_bridge(
    token_remote: Remote, tmp_path: Path, workspace: Path
) -> None:
    """What Zed or acpx would run locally: `lsp-agent acp --connect URL` on stdio, the agent on the socket."""
    client = RecordingClient(default_answer="allow_once")
    token_remote.script(FIX)
    bridge_env = agent_env(None, tmp_path, LSP_AGENT_ACP_TOKEN=TOKEN)
    command = ("-m", "lsp_agent", "acp", "--connect", token_remote.agent.url)
    async with spawn_agent_process(client, sys.executable, *command, env=bridge_env) as (conn, proc):
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        reply = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs)),
            30,
        )
        assert reply.agent_info.name == "lsp-agent"
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=text_prompt("fix add")), 300
        )
    assert result.stop_reason == "end_turn"
    assert (workspace / "calc.py").read_text() == FIXED
    assert client.writes == [str(workspace / "calc.py")]


async def test_the_bridge_says_when_the_token_is_wrong(guarded_listener: Listening, tmp_path: Path) -> None:
    bridge = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "acp", "--connect", guarded_listener.url, "--token", "wrong"],
        env=agent_env(None, tmp_path),
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert bridge.returncode == 1
    assert b"refused the connection (401)" in bridge.stderr and b"Bearer" in bridge.stderr


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are needed to install and run acpx")
async def test_acpx_drives_the_remote_agent_through_the_bridge(
    acpx_installed: Path,  # noqa: F811 - the imported fixture
    token_remote: Remote,
    tmp_path: Path,
    workspace: Path,
) -> None:
    token_remote.script(SCRIPT)
    bridge = f"{sys.executable} -m lsp_agent acp --connect {token_remote.agent.url}"
    command = [str(acpx_installed), "--agent", bridge, "--cwd", str(workspace), "--approve-all"]
    command += ["--format", "json", "--timeout", "120", "exec", "fix add in calc.py"]
    env = agent_env(None, tmp_path, HOME=str(tmp_path), LSP_AGENT_ACP_TOKEN=TOKEN)
    proc = await asyncio.to_thread(
        subprocess.run, command, env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert (workspace / "calc.py").read_text() == FIXED
    messages = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert "fs/write_text_file" in [m.get("method") for m in messages]  # acpx's own fs, over the bridge


async def test_bad_http_posts_get_the_json_rpc_error(open_listener: Listening) -> None:
    async with httpx.AsyncClient() as http:
        for body, code in [(b"[]", -32600), (b"5", -32600), (b"{bad", -32700)]:
            reply = await http.post(
                open_listener.http_url, content=body, headers={"content-type": "application/json"}
            )
            assert reply.status_code == 400
            assert reply.json()["error"]["code"] == code


def _running(marker: str) -> list[int]:
    """Processes whose command line contains `marker`."""
    found = []
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in status.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(status.parent.name))
        except OSError:
            continue
    return found


async def test_a_websocket_client_that_goes_away_stops_its_command(
    open_remote: Remote, workspace: Path
) -> None:
    open_remote.script([{"tool_calls": [call("run_command", argv=["sleep", "61.5"])]}])
    client = RecordingClient(default_answer="allow_once")
    agent = open_remote.agent
    async with ws_client(agent.url, client) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=text_prompt("go")))
        for _ in range(1200):
            if sleeping := _running("sleep 61.5"):
                break
            await asyncio.sleep(0.1)
        assert sleeping, "the command never started"
        turn.cancel()
    for _ in range(40):  # the socket is closed: the agent stops the run and its command
        if not _running("sleep 61.5"):
            break
        await asyncio.sleep(0.1)
    assert not _running("sleep 61.5"), "the command outlived its client's connection"
    assert agent.proc.poll() is None  # the listener serves on
