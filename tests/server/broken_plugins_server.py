"""Scenario server: `lsp-agent serve` whose MCP/sandbox plugins fail to load (as a broken install would)."""

from __future__ import annotations

from lsp_agent.cli.main import run
from lsp_agent.server import server as server_module
from lsp_agent.server.features import create_server


def broken_plugins() -> tuple:
    """Stands in for _load_plugins on a machine where the plugin modules cannot be imported."""
    raise ImportError("No module named 'mcp' (simulated broken install)")


def serve() -> int:
    """Serve over stdio until the client says exit."""
    create_server().start_io()
    return 0


if __name__ == "__main__":
    server_module._load_plugins = broken_plugins
    run(serve)  # exits as `lsp-agent serve` does: without the interpreter's slow teardown of litellm
