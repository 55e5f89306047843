"""Fixtures for the MCP tests: real MCP servers (stdio and streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import free_port, start_http_notes, stdio_config, stop

from lsp_agent.mcp import McpManager
from lsp_agent.mcp.config import parse_server


@pytest.fixture(scope="session")
def http_notes_url() -> Iterator[str]:
    """URL of a notes server on streamable HTTP shared by the tests that do not kill it."""
    port = free_port()
    proc = start_http_notes(port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(proc)


@pytest.fixture(scope="session")
def shared_manager(http_notes_url: str) -> Iterator[McpManager]:
    """A started manager with the stdio notes server ("notes") and the HTTP one ("web"); nothing kills them."""
    web = parse_server("web", {"url": http_notes_url})
    manager = McpManager([stdio_config(), web])
    errors = manager.ensure_started_sync()
    assert errors == []
    yield manager
    manager.close()


@pytest.fixture(scope="session", autouse=True)
def _litellm_once(litellm_imported: None) -> None:
    """Import litellm once per test process (the agent tests go through its real code path)."""
