"""`lsp-agent acp`: the Agent Client Protocol agent over stdio, for Zed, JetBrains IDEs, CodeCompanion, avante."""

from __future__ import annotations

import argparse

from lsp_agent.cli.common import add_model_flags


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`acp [--model ...]`."""
    p = commands.add_parser(
        "acp", help="run as an Agent Client Protocol agent over stdio (Zed, JetBrains, ...)"
    )
    add_model_flags(p)
    p.add_argument(
        "--login",
        action="store_true",
        help="ask for your model provider's API key on this terminal and keep it for ACP sessions, then exit "
        "(what an editor's terminal sign-in runs)",
    )
    p.set_defaults(handler=run_acp)


def run_acp(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent acp` (the protocol package loads only when this command runs)."""
    if getattr(args, "login", False):
        from lsp_agent.acp.auth import login

        return login()
    from lsp_agent.acp.main import run_acp as serve

    return serve(args)
