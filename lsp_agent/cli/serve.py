"""`lsp-agent serve`: run the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import sys

from lsp_agent.cli.common import LOG_LEVELS
from lsp_agent.logs import setup_logging


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`serve [--stdio | --tcp HOST:PORT]`."""
    p = commands.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdio (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.add_argument("--log-file", help="write logs to this file")
    p.set_defaults(handler=run_serve)


TERMINAL_HINT = (
    "lsp-agent serve: this is the lsp-agent language server; it speaks LSP (JSON-RPC) on stdin/stdout and is "
    "meant to be started by an editor (see editor-clients/README.md: VS Code, Neovim, or any LSP client with the "
    "command `lsp-agent serve`). From a terminal, try `lsp-agent ask TASK` or `lsp-agent search QUERY`. "
    "Waiting for LSP messages on stdin; Ctrl-D ends it."
)


def parse_tcp(value: str) -> tuple[str, int]:
    """HOST:PORT -> (host, port), port 0 meaning any free port; ValueError with a usable message otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(
            f"--tcp expects HOST:PORT (e.g. 127.0.0.1:2087, or port 0 for a free one), got {value!r}"
        )
    return host or "127.0.0.1", int(port)


def run_serve(args: argparse.Namespace) -> int:
    """Start the server and serve until the client says exit."""
    setup_logging(getattr(args, "log_level", None), getattr(args, "log_file", None))
    from lsp_agent.server.features import create_server

    server = create_server()
    tcp = getattr(args, "tcp", None)
    if tcp:
        try:
            host, port = parse_tcp(tcp)
        except ValueError as exc:
            print(f"lsp-agent serve: {exc}", file=sys.stderr)
            return 2
        server.start_tcp(host, port)
    else:
        if sys.stdin.isatty():  # started by hand: say what this is before waiting for JSON-RPC
            print(TERMINAL_HINT, file=sys.stderr, flush=True)
        server.start_io()
    return 0
