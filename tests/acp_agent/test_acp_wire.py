"""ACP's wire rules through a real `lsp-agent acp` process and raw bytes: every bad line answered with a JSON-RPC
error, nothing a client sends ends the agent, exit within a second of stdin closing, cwds that cannot be a project
refused."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_support import agent_env
from raw_acp import RawAcp, alive

from lsp_agent.acp.wire import MAX_MESSAGE_BYTES
from lsp_agent.testing.scripted_model import ScriptedModelServer

PARSE, INVALID, PARAMS = -32700, -32600, -32602
INIT = {"protocolVersion": 1}


def req(msg_id: object, method: str = "initialize", params: object = INIT, **extra: object) -> bytes:
    """A request line."""
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params, **extra}).encode()


HOSTILE = [
    # (line, expected error code, expected id)
    (b"[]", INVALID, None),
    (b"5", INVALID, None),
    (b'"initialize"', INVALID, None),
    (b"null", INVALID, None),
    (b"true", INVALID, None),
    (b"{not json", PARSE, None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}', PARSE, None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', PARSE, None),
    (b"[" * 200_000 + b"]" * 200_000, PARSE, None),  # json.loads: RecursionError
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, PARSE, None),
    (b'{"jsonrpc": "2.0"}', INVALID, None),
    (b'{"jsonrpc": "2.0", "params": {}}', INVALID, None),
    (b'{"jsonrpc": "2.0", "id": 31}', INVALID, 31),
    (json.dumps([json.loads(req(32)), json.loads(req(33))]).encode(), INVALID, 32),
    (req(34, jsonrpc="1.0"), INVALID, 34),
    (json.dumps({"id": 35, "method": "initialize", "params": INIT}).encode(), INVALID, 35),
    (req({"a": 1}), INVALID, None),
    (req(True), INVALID, None),
    (req(1.5), INVALID, None),
    (req(36, method=7), INVALID, 36),
    (req(37, method=""), INVALID, 37),
    (req(38, params=5), INVALID, 38),
    (req(39, params={"protocolVersion": "1"}), PARAMS, 39),
    (req(40, params={"protocolVersion": True}), PARAMS, 40),
    (req(41, params={"protocolVersion": 70000}), PARAMS, 41),
    (req(42, params=[1]), PARAMS, 42),
    (req("s-43", method="session/prompt", params={"sessionId": "nope", "prompt": []}), PARAMS, "s-43"),
    (req(44, method="no/such/method", params={}), -32601, 44),
]


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawAcp]:
    """One agent (no model needed) for the hostile lines; it must survive them all."""
    home = tmp_path_factory.mktemp("acp-wire")
    agent = RawAcp(agent_env(None, home), home)
    yield agent
    agent.kill()


@pytest.mark.parametrize(("line", "code", "msg_id"), HOSTILE, ids=[repr(h[0][:40]) for h in HOSTILE])
def test_hostile_line_is_answered_and_the_agent_keeps_serving(
    raw: RawAcp, line: bytes, code: int, msg_id: object
) -> None:
    raw.write(line + b"\n")
    reply = raw.reply()
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"]["code"] == code, reply
    assert reply["id"] == msg_id
    assert reply["error"]["message"]
    if line.startswith(b"[{"):  # every request of a batch is refused, none is run
        assert raw.reply()["id"] == 33
    assert raw.no_reply(0.2)
    assert raw.initialize()["protocolVersion"] == 1
    assert raw.proc.poll() is None


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "1.0", "method": "session/cancel", "params": {"sessionId": "x"}}',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": 5}',
        b'{"jsonrpc": "2.0", "id": 9999, "result": {}}',  # a response to nothing
        b'{"jsonrpc": "2.0", "id": 9998, "error": "boom"}',  # SDK: "boom".get -> AttributeError
        b"   ",
    ],
)
def test_bad_notifications_and_responses_get_no_answer_and_end_nothing(raw: RawAcp, line: bytes) -> None:
    raw.write(line + b"\n")
    assert raw.no_reply(0.3)
    assert raw.initialize()["protocolVersion"] == 1


def test_an_oversized_line_is_refused_with_its_id_and_not_held(raw: RawAcp) -> None:
    padding = b"x" * (MAX_MESSAGE_BYTES + 10)
    raw.write(
        b'{"jsonrpc": "2.0", "id": 77, "method": "initialize", "params": {"pad": "' + padding + b'"}}\n'
    )
    reply = raw.reply(60)
    assert (reply["id"], reply["error"]["code"]) == (77, INVALID)
    assert "limit" in reply["error"]["message"]
    assert raw.initialize()["protocolVersion"] == 1


def test_a_line_in_several_writes_and_two_lines_in_one_write(raw: RawAcp) -> None:
    first, second = req(501), req(502)
    raw.write(first[:10])
    raw.write(first[10:] + b"\n" + second + b"\n")
    assert {raw.reply()["id"], raw.reply()["id"]} == {501, 502}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "main.py").write_text("def main():\n    return 1\n" * 50)
    return root


def test_cwds_that_cannot_be_a_project_are_refused(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    agent = RawAcp(agent_env(None, tmp_path, HOME=str(home)), tmp_path)
    try:
        agent.initialize()
        for cwd, words in [
            ("/", "file system root"),
            ("/proc", "/proc"),
            ("/sys/kernel", "/sys"),
            ("/dev", "/dev"),
            (str(home), "home directory"),
            (str(tmp_path), "above the home directory"),
        ]:
            reply = agent.request("session/new", {"cwd": cwd, "mcpServers": []})
            assert reply["error"]["code"] == PARAMS, reply
            assert words in reply["error"]["message"] and "project folder" in reply["error"]["message"]
        extra = {"cwd": str(project), "mcpServers": [], "additionalDirectories": ["/"]}
        assert "file system root" in agent.request("session/new", extra)["error"]["message"]
        ok = agent.request("session/new", {"cwd": str(project), "mcpServers": []})
        assert ok["result"]["sessionId"]
    finally:
        agent.kill()


def test_stdin_closed_after_session_new_exits_within_a_second(tmp_path: Path, project: Path) -> None:
    agent = RawAcp(agent_env(None, tmp_path), tmp_path)
    try:
        agent.initialize()
        assert agent.request("session/new", {"cwd": str(project), "mcpServers": []})["result"]["sessionId"]
        # the warm-up thread (litellm's import) and the index build are running now
        took = agent.close_stdin()
        assert agent.proc.returncode == 0, agent.stderr
        assert took < 1.0, f"the agent took {took:.2f} s to exit"
    finally:
        agent.kill()


@pytest.mark.slow
def test_stdin_closed_during_a_command_leaves_no_process(tmp_path: Path, project: Path) -> None:
    steps = [{"tool_calls": [{"name": "run_command", "arguments": {"argv": ["sleep", "60"]}}]}]
    with ScriptedModelServer(steps) as server:
        agent = RawAcp(agent_env(server, tmp_path), tmp_path)
        try:
            agent.initialize()
            session = agent.request("session/new", {"cwd": str(project), "mcpServers": []})["result"][
                "sessionId"
            ]
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
            agent.write(req(600, "session/prompt", prompt) + b"\n")
            children: set[int] = set()
            for _ in range(600):  # the command starts after litellm's import and the permission question
                children = {pid for pid in agent.children() if "sleep" in _cmdline(pid)}
                if children:
                    break
                assert agent.proc.poll() is None, agent.stderr[-5:]
                time.sleep(0.1)
            assert children, f"the command never started: {agent.stderr[-5:]}"
            took = agent.close_stdin()
            assert took < 1.0, f"the agent took {took:.2f} s to exit"
            assert not [pid for pid in children if alive(pid)], "the command outlived the agent"
        finally:
            agent.kill()


def _cmdline(pid: int) -> str:
    """A process's command line ('' once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.slow
def test_stdin_closed_with_an_mcp_server_running_stops_it(tmp_path: Path, project: Path) -> None:
    notes = Path(__file__).parents[1] / "mcp" / "servers" / "notes_server.py"
    steps = [{"tool_calls": [{"name": "task_complete", "arguments": {"summary": "ok"}}]}]
    with ScriptedModelServer(steps) as server:
        agent = RawAcp(agent_env(server, tmp_path), tmp_path)
        try:
            agent.initialize()
            mcp = [{"name": "notes", "command": sys.executable, "args": [str(notes)], "env": []}]
            session = agent.request("session/new", {"cwd": str(project), "mcpServers": mcp})["result"][
                "sessionId"
            ]
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
            assert agent.request("session/prompt", prompt, timeout=300)["result"]["stopReason"] == "end_turn"
            servers = {pid for pid in agent.children() if "notes_server" in _cmdline(pid)}
            assert servers, "the MCP server was not started by the prompt"
            took = agent.close_stdin()
            assert took < 1.0, f"the agent took {took:.2f} s to exit"
            deadline = time.monotonic() + 5  # the server was told to stop; a loaded machine may reap it late
            while [pid for pid in servers if alive(pid)] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not [pid for pid in servers if alive(pid)], "the MCP server outlived the agent by 5 s"
        finally:
            agent.kill()
