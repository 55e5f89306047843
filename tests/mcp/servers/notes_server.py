"""A small real MCP server for the tests: notes lookup, arithmetic, errors, images, long output, env, headers, a crash.

Run `python notes_server.py` for stdio or `python notes_server.py --http PORT` for streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent

NOTES = {
    "deploy": "Deploys go out on Tuesdays; the release captain is Ada.",
    "oncall": "The on-call rotation changes every Monday at 09:00 UTC.",
}

server = MCPServer("notes", instructions="Team notes for tests.", log_level="WARNING")


@server.tool()
def lookup_note(topic: str) -> str:
    """Look up the team note about a topic (deploy, oncall)."""
    if topic not in NOTES:
        raise ToolError(f"no note about {topic!r}; known topics: {', '.join(sorted(NOTES))}")
    return NOTES[topic]


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def chart(title: str) -> list[TextContent | ImageContent]:
    """Draw a chart (returns a caption and a PNG image)."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 92).decode()
    return [
        TextContent(type="text", text=f"chart {title}"),
        ImageContent(type="image", data=png, mime_type="image/png"),
    ]


@server.tool()
def long_text(lines: int) -> str:
    """Return many numbered lines."""
    return "\n".join(f"line {i} of the long output" for i in range(1, lines + 1))


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def shout(kilobytes: int) -> str:
    """Write this many kilobytes of log lines to stderr (a chatty server)."""
    for i in range(kilobytes * 16):
        sys.stderr.write(f"log line {i:>6} of a chatty server {'.' * 26}\n")  # 64 bytes
    sys.stderr.flush()
    return "shouted"


@server.tool()
def env_var(name: str) -> str:
    """The value of one of the server's environment variables ('' when unset)."""
    return os.environ.get(name, "")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP header of this request ('' when absent or over stdio)."""
    return (ctx.headers or {}).get(name, "")


@server.tool()
def crash() -> str:
    """Exit the server process abruptly (simulates a crash)."""
    sys.stderr.write("notes server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    if os.environ.get("NOTES_PID_FILE"):
        with open(os.environ["NOTES_PID_FILE"], "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
