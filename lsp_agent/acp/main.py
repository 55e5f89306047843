"""`lsp-agent acp`: serve the agent over the Agent Client Protocol on stdio (stdout carries only JSON-RPC), or
on a WebSocket with --listen (acp/remote.py)."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import logging
import os
import signal
import sys
from typing import Any

from lsp_agent.logs import setup_logging

log = logging.getLogger(__name__)

TERMINAL_HINT = (
    "lsp-agent acp: this is lsp-agent's Agent Client Protocol agent; it speaks JSON-RPC on stdin/stdout and is "
    "meant to be started by an editor (Zed's agent_servers, JetBrains AI Assistant, CodeCompanion, avante, "
    "agent-shell; see docs/acp.md). Waiting for ACP messages on stdin; Ctrl-D ends it."
)
# at the end, how long sessions' runs and MCP servers get to stop before the process exits
CLOSE_SECONDS = 0.6


def run_acp(args: argparse.Namespace) -> int:
    """Serve one ACP client until it closes stdin (--listen: remote clients until interrupted; --connect: relay
    to a remote agent); the process then exits at once (see leave())."""
    setup_logging(getattr(args, "log_level", None), getattr(args, "log_file", None))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    flags = {"model": args.model, "api_base": args.api_base, "api_key": args.api_key}
    # SIGTERM (acpx sends it 100 ms after closing stdin) ends the agent like Ctrl-C: runs cancelled, exit hooks run
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if getattr(args, "connect", None):
        from lsp_agent.acp.bridge import run_bridge

        code = run_bridge(args.connect, args.token)
    elif getattr(args, "listen", None):
        from lsp_agent.acp.remote import serve_remote

        code = serve_remote(args, flags)
    else:
        if sys.stdin.isatty():
            print(TERMINAL_HINT, file=sys.stderr, flush=True)
        code = run_loop(serve(flags))
    leave(code)
    return code  # not reached


def run_loop(main: Any) -> int:
    """asyncio.run() without its last step: it joins the default executor's threads, and a warm-up or an index
    build in one of them held the process 13-20 s after the client closed stdin."""
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main)
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        leftover = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.wait(leftover, timeout=CLOSE_SECONDS))
        loop.close()  # shuts the executor down without waiting for its threads


def leave(code: int) -> None:
    """Exit now: run the exit hooks (sandboxes' children, MCP servers left open, logging), flush, os._exit.

    Threads still running are a litellm warm-up (an optimisation) and index builds (SQLite transactions, rolled
    back on the next open); no Python thread can be interrupted, so waiting for them is all a normal exit adds.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def make_agent(flags: dict) -> Any:
    """The ACP agent with the permission timeout of the environment."""
    from lsp_agent.acp.agent import LspAgentAcp
    from lsp_agent.acp.permissions import DEFAULT_TIMEOUT

    timeout = float(os.environ.get("LSP_AGENT_PERMISSION_TIMEOUT") or DEFAULT_TIMEOUT)
    return LspAgentAcp(flags, permission_timeout=timeout)


async def serve(flags: dict) -> None:
    """Run the agent on this process's stdin/stdout until the client closes stdin."""
    from lsp_agent.acp.transport import stdio_transport

    await serve_connection(make_agent(flags), await stdio_transport())


async def serve_connection(agent: Any, transport: Any) -> None:
    """Serve one client over a message transport; at its end, stop the agent's runs and MCP servers."""
    from acp import AgentSideConnection

    conn = AgentSideConnection(agent, transport, listening=False)
    try:
        await conn.listen()
    finally:
        await close_sessions(agent)
        try:
            await asyncio.wait_for(asyncio.shield(conn.close()), CLOSE_SECONDS)
        except (TimeoutError, Exception) as exc:  # noqa: BLE001 - the connection is gone either way
            log.info("closing the ACP connection: %s", exc or "timed out")


async def close_sessions(agent: Any) -> None:
    """Cancel the sessions' runs and open questions and stop their MCP servers, within CLOSE_SECONDS."""
    managers = []
    for session in list(getattr(agent, "sessions", {}).values()):
        session.cancel_requested = True
        session.requests.cancel_all()
        if session.run is not None:
            session.run.cancel()
        if session.mcp is not None:
            managers.append(session.mcp)
    if not managers:
        return
    closing = [asyncio.to_thread(m.close, CLOSE_SECONDS) for m in managers]
    done, _ = await asyncio.wait([asyncio.ensure_future(c) for c in closing], timeout=CLOSE_SECONDS)
    if len(done) < len(managers):
        log.info("some MCP servers did not stop within %.1f s", CLOSE_SECONDS)
