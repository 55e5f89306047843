"""`lsp-agent acp`: serve the agent over the Agent Client Protocol on stdio (stdout carries only JSON-RPC)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from lsp_agent.logs import setup_logging

TERMINAL_HINT = (
    "lsp-agent acp: this is lsp-agent's Agent Client Protocol agent; it speaks JSON-RPC on stdin/stdout and is "
    "meant to be started by an editor (Zed's agent_servers, JetBrains AI Assistant, CodeCompanion, avante, "
    "agent-shell; see the README). Waiting for ACP messages on stdin; Ctrl-D ends it."
)


def run_acp(args: argparse.Namespace) -> int:
    """Serve one ACP client until it closes stdin."""
    setup_logging(getattr(args, "log_level", None), getattr(args, "log_file", None))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    flags = {"model": args.model, "api_base": args.api_base, "api_key": args.api_key}
    if sys.stdin.isatty():
        print(TERMINAL_HINT, file=sys.stderr, flush=True)
    asyncio.run(serve(flags))
    return 0


async def serve(flags: dict) -> None:
    """Run the agent on this process's stdin/stdout."""
    from acp import run_agent

    from lsp_agent.acp.agent import LspAgentAcp
    from lsp_agent.acp.permissions import DEFAULT_TIMEOUT

    timeout = float(os.environ.get("LSP_AGENT_PERMISSION_TIMEOUT") or DEFAULT_TIMEOUT)
    await run_agent(LspAgentAcp(flags, permission_timeout=timeout))
