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
    p.set_defaults(handler=run_acp)


def run_acp(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent acp` (the protocol package loads only when this command runs)."""
    from lsp_agent.acp.main import run_acp as serve

    return serve(args)
