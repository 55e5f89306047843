"""Requests the server sends to the client, with timeouts that do not break pygls' bookkeeping."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any


async def request_within(request: Awaitable[Any], timeout: float) -> Any:
    """Await a request to the client for at most `timeout` s (TimeoutError), leaving pygls' future intact.

    Cancelling pygls' own future makes it fail when the late answer arrives; the shield keeps it waiting.
    """
    return await asyncio.wait_for(asyncio.shield(asyncio.ensure_future(request)), timeout)
