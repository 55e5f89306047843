"""`lsp-agent acp --connect ws://HOST:PORT/acp`: stdio to a remote agent's WebSocket, for editors that only start
agents as processes (Zed, JetBrains, CodeCompanion, avante, acpx): the editor runs the bridge locally, the agent
runs where the code and the model are (`lsp-agent acp --listen`)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from lsp_agent.acp.remote import TOKEN_ENV
from lsp_agent.acp.transport import stdio_transport
from lsp_agent.acp.wire import MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)


async def relay(url: str, token: str | None) -> int:
    """Relay stdin lines to the socket and its frames to stdout until either side ends; the exit code."""
    import websockets

    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        socket = await websockets.connect(url, additional_headers=headers, max_size=MAX_MESSAGE_BYTES)
    except websockets.InvalidStatus as exc:
        body = exc.response.body.decode(errors="replace") if exc.response.body else ""
        print(
            f"lsp-agent acp: {url} refused the connection ({exc.response.status_code}) {body}",
            file=sys.stderr,
        )
        return 1
    except (OSError, websockets.InvalidURI, websockets.InvalidHandshake, TimeoutError) as exc:
        print(f"lsp-agent acp: cannot reach {url}: {exc}", file=sys.stderr)
        return 1
    stdio = await stdio_transport()  # bad lines are answered here, as the agent would
    async with socket:
        up = asyncio.ensure_future(_upstream(stdio, socket))
        down = asyncio.ensure_future(_downstream(socket, stdio))
        done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
    if down in done and not down.cancelled() and down.exception() is None and not up.done():
        print(f"lsp-agent acp: the agent at {url} closed the connection", file=sys.stderr)
    return 0


async def _upstream(stdio: Any, socket: Any) -> None:
    """Editor -> agent, until stdin ends."""
    while (message := await stdio.receive()) is not None:
        await socket.send(json.dumps(message, separators=(",", ":")))


async def _downstream(socket: Any, stdio: Any) -> None:
    """Agent -> editor, until the socket closes."""
    import websockets

    try:
        async for frame in socket:
            try:
                message = json.loads(frame)
            except ValueError:
                log.warning("the agent sent a frame that is no JSON; dropped")
                continue
            await stdio.send(message)
    except websockets.ConnectionClosed:
        return


def run_bridge(url: str, token: str | None) -> int:
    """`--connect`: the exit code of the relay."""
    from lsp_agent.acp.main import run_loop

    result: list[int] = []

    async def main() -> None:
        result.append(await relay(url, token or os.environ.get(TOKEN_ENV) or None))

    code = run_loop(main())
    return result[0] if result else code
