"""The manager against real MCP servers: lazy start, calls from any loop, failures, deaths, timeouts, shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import BROKEN, NOTES, free_port, start_http_notes, stdio_config, stop

from lsp_agent.config import Settings
from lsp_agent.mcp import McpManager, McpUnavailable, register_mcp_tools
from lsp_agent.mcp.config import parse_server
from lsp_agent.mcp.results import render_result
from lsp_agent.tools.registry import ToolContext, ToolRegistry
from lsp_agent.workspace.overlay import Overlay

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting to be reaped counts as gone
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


async def test_stdio_and_http_servers_list_tools_and_answer(shared_manager: McpManager):
    rows = {row["name"]: row for row in shared_manager.status()}
    assert rows["notes"]["state"] == rows["web"]["state"] == "ready"
    assert {"lookup_note", "add", "chart", "crash"} <= set(rows["web"]["tools"])
    assert rows["notes"]["error"] is None and rows["notes"]["transport"] == "stdio"
    for server in ("notes", "web"):
        result = await shared_manager.call_tool(server, "lookup_note", {"topic": "deploy"})
        assert render_result(result) == "Deploys go out on Tuesdays; the release captain is Ada."
        assert not result.is_error
        failed = await shared_manager.call_tool(server, "lookup_note", {"topic": "lunch"})
        assert failed.is_error and "no note about 'lunch'" in render_result(failed)
    chart = await shared_manager.call_tool("web", "chart", {"title": "q3"})
    assert render_result(chart) == "chart q3\n[image: image/png, 100 bytes, not shown]"


def test_sessions_outlive_the_loops_of_single_runs(shared_manager: McpManager):
    async def one_run(a: int) -> str:
        assert await shared_manager.ensure_started() == []
        return render_result(await shared_manager.call_tool("notes", "add", {"a": a, "b": 1}))

    assert asyncio.run(one_run(1)) == "2"
    assert asyncio.run(one_run(41)) == "42"


async def test_cancelling_a_run_cancels_its_call_and_the_session_survives(shared_manager: McpManager):
    call = asyncio.ensure_future(shared_manager.call_tool("notes", "slow", {"seconds": 10}))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert time.monotonic() - started < 1.0
    assert render_result(await shared_manager.call_tool("notes", "add", {"a": 2, "b": 5})) == "7"
    assert shared_manager.status()[0]["state"] == "ready"


async def test_concurrent_calls_share_one_session(shared_manager: McpManager):
    results = await asyncio.gather(
        *(shared_manager.call_tool("web", "add", {"a": i, "b": i}) for i in range(6))
    )
    assert [render_result(r) for r in results] == [str(2 * i) for i in range(6)]


async def test_servers_that_fail_to_start_are_reported_and_left_out():
    hang = parse_server(
        "hang",
        {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"], "startupTimeout": 1},
    )
    missing = parse_server("missing", {"command": "no-such-mcp-server-binary"})
    manager = McpManager([stdio_config("broken", BROKEN), missing, hang])
    try:
        assert [row["state"] for row in manager.status()] == ["idle", "idle", "idle"]
        started = time.monotonic()
        errors = await manager.ensure_started()
        assert time.monotonic() - started < 8
        text = "\n".join(errors)
        assert "'broken'" in text and "missing NOTES_TOKEN environment variable" in text
        assert "'missing'" in text and "command not found: 'no-such-mcp-server-binary'" in text
        assert "'hang'" in text and "did not start within 1s" in text
        assert manager.tools() == []
        assert {row["state"] for row in manager.status()} == {"failed"}
        # a later run does not wait for them again (they are retried after a cool-down or a config change)
        started = time.monotonic()
        assert await manager.ensure_started() == []
        assert time.monotonic() - started < 0.5
        with pytest.raises(McpUnavailable, match="'broken' is unavailable: failed to start"):
            await manager.call_tool("broken", "anything", {})
    finally:
        await manager.aclose()


@pytest.mark.slow
async def test_a_stdio_server_that_dies_is_marked_failed_and_restarted_next_run(tmp_path: Path, monkeypatch):
    import lsp_agent.mcp.server_stderr as server_stderr

    monkeypatch.setattr(server_stderr, "STDERR_KEEP_BYTES", 20_000)
    pids = tmp_path / "pids"
    manager = McpManager([stdio_config(env={"NOTES_PID_FILE": str(pids)})])
    try:
        assert await manager.ensure_started() == []
        first_pid = int(pids.read_text().split()[0])
        # a chatty server's captured stderr is trimmed to its tail
        assert render_result(await manager.call_tool("notes", "shout", {"kilobytes": 64})) == "shouted"
        captured = manager._connections["notes"]._stderr
        assert captured is not None and os.fstat(captured.file.fileno()).st_size < 5_000
        with pytest.raises(McpUnavailable) as info:
            await manager.call_tool("notes", "crash", {})
        assert "stopped while running" in str(info.value)
        assert "crashing on purpose" in str(info.value)
        row = manager.status()[0]
        assert row["state"] == "failed" and row["tools"] == []
        with pytest.raises(McpUnavailable, match="cannot be used in this run"):
            await manager.call_tool("notes", "add", {"a": 1, "b": 2})
        assert _wait_gone(first_pid)
        # the next run brings it back
        assert await manager.ensure_started() == []
        assert render_result(await manager.call_tool("notes", "add", {"a": 1, "b": 2})) == "3"
        second_pid = int(pids.read_text().split()[1])
        assert second_pid != first_pid
        # killed while idle: the next run notices when it re-lists the tools, and restarts it right away
        os.kill(second_pid, signal.SIGKILL)
        assert _wait_gone(second_pid)
        assert await manager.ensure_started() == []
        assert render_result(await manager.call_tool("notes", "add", {"a": 2, "b": 2})) == "4"
        second_pid = int(pids.read_text().split()[2])
    finally:
        await manager.aclose()
    assert manager.status()[0]["state"] == "stopped"
    assert _wait_gone(second_pid)
    with pytest.raises(McpUnavailable, match="closed"):
        await manager.call_tool("notes", "add", {"a": 1, "b": 2})


@pytest.mark.slow
async def test_an_http_server_that_dies_mid_call_fails_the_call_clearly():
    port = free_port()
    proc = start_http_notes(port)
    manager = McpManager([parse_server("web", {"url": f"http://127.0.0.1:{port}/mcp"})])
    try:
        assert await manager.ensure_started() == []
        call = asyncio.ensure_future(manager.call_tool("web", "slow", {"seconds": 5}))
        await asyncio.sleep(0.5)
        stop(proc)
        with pytest.raises(McpUnavailable, match="'web' is unavailable: stopped while running"):
            await asyncio.wait_for(call, 10)
        assert manager.status()[0]["state"] == "failed"
        errors = await manager.ensure_started()  # retried: the server is gone, so it is reported
        assert "cannot connect to http://127.0.0.1" in errors[0]
    finally:
        stop(proc)
        await manager.aclose()


async def test_slow_tools_time_out_and_errors_become_tool_errors(shared_manager: McpManager, tmp_path: Path):
    pids = tmp_path / "pids"
    manager = McpManager([stdio_config("quick", toolTimeout=0.5, env={"NOTES_PID_FILE": str(pids)})])
    try:
        assert await manager.ensure_started() == []
        pid = int(pids.read_text())
        registry = ToolRegistry()
        register_mcp_tools(registry, manager)
        register_mcp_tools(registry, shared_manager)
        ctx = ToolContext(root=tmp_path, overlay=Overlay(tmp_path))
        slow = await registry.execute("quick__slow", {"seconds": 3}, ctx)
        assert not slow.ok and "quick__slow" in slow.output and "did not answer" in slow.output
        assert manager.status()[0]["state"] == "ready"  # a slow call does not fail the server
        bad = await registry.execute("notes__lookup_note", {"topic": "lunch"}, ctx)
        assert not bad.ok
        assert bad.output.startswith("Error: notes__lookup_note reported an error:")
        assert "known topics: deploy, oncall" in bad.output
        missing = await registry.execute("notes__add", {"a": 1}, ctx)
        assert not missing.ok and "missing required parameter 'b'" in missing.output
        long = await registry.execute("web__long_text", {"lines": 3000}, ctx)
        assert long.ok and "[output truncated: showing the first 20,000 of" in long.output
        # a server removed from the configuration is stopped
        await asyncio.to_thread(manager.configure, [])
        assert manager.status() == [] and manager.tools() == []
        assert _wait_gone(pid)
    finally:
        await manager.aclose()


@pytest.mark.slow
def test_servers_stop_when_the_process_exits_without_close(tmp_path: Path):
    pids = tmp_path / "pids"
    program = (
        "import sys\n"
        "from lsp_agent.mcp import McpManager\n"
        "from lsp_agent.mcp.config import parse_server\n"
        f"spec = {{'command': sys.executable, 'args': [{str(NOTES)!r}], 'env': {{'NOTES_PID_FILE': {str(pids)!r}}}, "
        "'startupTimeout': 60}\n"
        "manager = McpManager([parse_server('notes', spec)])\n"
        "assert manager.ensure_started_sync() == []\n"
        "print('started', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout == "started\n", proc.stderr
    assert _wait_gone(int(pids.read_text()))


async def test_servers_configured_with_variables_get_the_values(http_notes_url: str, monkeypatch):
    from urllib.parse import urlsplit

    monkeypatch.setenv("MCP_TEST_SECRET", "tok-123")
    monkeypatch.setenv("MCP_TEST_SERVERS", str(NOTES.parent))
    monkeypatch.setenv("MCP_TEST_PORT", str(urlsplit(http_notes_url).port))
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    manager = McpManager.from_settings(
        Settings(
            mcp_servers={
                "notes": {
                    "command": sys.executable,
                    "args": ["${env:MCP_TEST_SERVERS}/notes_server.py"],
                    "env": {"TEAM_TOKEN": "${MCP_TEST_SECRET}"},
                },
                "web": {
                    "url": "http://127.0.0.1:${MCP_TEST_PORT}/mcp",
                    "headers": {"X-Team-Token": "Bearer ${env:MCP_TEST_SECRET}"},
                },
                "gh": {"command": sys.executable, "env": {"GITHUB_TOKEN": "${MCP_TEST_UNSET}"}},
            }
        ),
        None,
        read_files=False,
    )
    try:
        assert await manager.ensure_started() == []
        assert render_result(await manager.call_tool("notes", "env_var", {"name": "TEAM_TOKEN"})) == "tok-123"
        web = render_result(await manager.call_tool("web", "header", {"name": "x-team-token"}))
        assert web == "Bearer tok-123"
        (problem,) = manager.errors()
        assert problem.startswith("MCP server 'gh' (settings): env.GITHUB_TOKEN uses ${MCP_TEST_UNSET}")
        assert [row["name"] for row in manager.status()] == ["notes", "web"]
        assert all("tok-123" not in str(row) for row in manager.status())
    finally:
        await manager.aclose()
