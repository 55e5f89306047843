"""Helpers for the MCP tests: paths of the test servers, configs, and starting the HTTP server."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsp_agent.mcp import McpServerConfig
from lsp_agent.mcp.config import parse_server

SERVERS = Path(__file__).parent / "servers"
NOTES = SERVERS / "notes_server.py"
BROKEN = SERVERS / "broken_server.py"
DYNAMIC = SERVERS / "dynamic_server.py"


def stdio_config(name: str = "notes", script: Path = NOTES, **extra: Any) -> McpServerConfig:
    """A stdio server running one of the test servers with this Python, 60 s to start (a loaded machine)."""
    return parse_server(
        name, {"command": sys.executable, "args": [str(script)], "startupTimeout": 60, **extra}
    )


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_http_notes(port: int) -> subprocess.Popen:
    """The notes server over streamable HTTP on 127.0.0.1:port, once it accepts connections."""
    proc = subprocess.Popen(
        [sys.executable, str(NOTES), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the HTTP notes server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the HTTP notes server did not start listening")


def stop(proc: subprocess.Popen) -> None:
    """Kill a server process and reap it."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)
