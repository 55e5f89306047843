"""`lsp-agent acp`: the Agent Client Protocol agent over stdio (Zed, JetBrains IDEs, CodeCompanion, avante), or
over WebSocket and Streamable HTTP with --listen (docs/acp-remote.md)."""

from __future__ import annotations

import argparse

from lsp_agent.cli.common import add_model_flags


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`acp [--model ...] [--listen HOST:PORT [--token T] [--require-token] | --connect URL [--token T]]`."""
    p = commands.add_parser(
        "acp", help="run as an Agent Client Protocol agent over stdio (Zed, JetBrains, ...) or a WebSocket"
    )
    add_model_flags(p)
    p.add_argument(
        "--login",
        action="store_true",
        help="ask for your model provider's API key on this terminal and keep it for ACP sessions, then exit "
        "(what an editor's terminal sign-in runs)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="serve ws://HOST:PORT/acp (and Streamable HTTP) instead of stdio, for an editor on another machine; "
        "an address other than loopback requires a bearer token",
    )
    where.add_argument(
        "--connect",
        metavar="URL",
        help="relay stdio to an agent started elsewhere with --listen (ws://HOST:PORT/acp): what an editor "
        "runs locally to drive a remote agent",
    )
    p.add_argument(
        "--token",
        help="the bearer token of --listen and --connect (else $LSP_AGENT_ACP_TOKEN, else one is generated "
        "and printed where a token is required); the environment variable keeps it out of `ps`",
    )
    p.add_argument(
        "--require-token",
        action="store_true",
        help="require the bearer token on loopback too (on a machine other people use)",
    )
    p.set_defaults(handler=run_acp)


def run_acp(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent acp` (the protocol package loads only when this command runs)."""
    if getattr(args, "login", False):
        from lsp_agent.acp.auth import login

        return login()
    from lsp_agent.acp.main import run_acp as serve

    return serve(args)
