"""Scenario server: `lsp-agent serve` plus one guarded tool, `stamp` (permission "exec"), added via tool_providers."""

from __future__ import annotations

from lsp_agent.cli.main import run
from lsp_agent.config import Settings
from lsp_agent.server.features import create_server
from lsp_agent.tools.registry import Tool, ToolContext, ToolRegistry


def stamp(ctx: ToolContext, text: str) -> str:
    """Pretend to run something and say so."""
    return f"stamped {text}"


def add_stamp_tool(registry: ToolRegistry, settings: Settings) -> None:
    """The tool provider: registers `stamp` as a tool that needs the user's permission."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    registry.register(Tool("stamp", "Stamp a text (runs code on the user's machine).", schema, stamp, "exec"))


def serve() -> int:
    """Serve over stdio until the client says exit."""
    server = create_server()
    server.tool_providers.append(add_stamp_tool)
    server.start_io()
    return 0


if __name__ == "__main__":
    run(serve)  # exits as `lsp-agent serve` does: without the interpreter's slow teardown of litellm
