"""Server-initiated $/progress: begin, reports, end, and client-side cancellation of the token."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from lsp_agent.server.client_requests import request_within

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer


log = logging.getLogger(__name__)
_counter = itertools.count(1)


class ProgressReporter:
    """One progress token; a no-op when the client does not support window/workDoneProgress."""

    def __init__(self, server: AgentServer, title: str, token: str | None = None) -> None:
        self.server = server
        self.title = title
        self.token = token or f"lsp-agent/{next(_counter)}"
        self.active = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def begin(self, message: str, *, on_cancel: Callable[[], None] | None = None) -> None:
        """Create the token on the client and send `begin` (cancellable when on_cancel is given)."""
        self._loop = asyncio.get_running_loop()
        if not self.server.supports_progress():
            return
        try:
            await request_within(self.server.work_done_progress.create_async(self.token), 10)
        except Exception as exc:  # the client refused or never answered: work goes on without progress
            log.info("progress token %s not created: %s", self.token, exc)
            return
        if on_cancel is not None:
            self.server.progress_cancel_handlers[self.token] = on_cancel
        self.active = True
        self.server.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=self.title, message=message, cancellable=on_cancel is not None, percentage=0
            ),
        )

    def report(self, message: str, percentage: int | None = None) -> None:
        """Send one report (on the event loop thread)."""
        if self.active:
            message = message.splitlines()[0] if message else ""
            self.server.work_done_progress.report(
                self.token,
                types.WorkDoneProgressReport(message=message[:200], percentage=percentage, cancellable=True),
            )

    def report_threadsafe(self, message: str, percentage: int | None = None) -> None:
        """Send one report from any thread."""
        if self.active and self._loop is not None:
            self._loop.call_soon_threadsafe(self.report, message, percentage)

    def end(self, message: str) -> None:
        """Send `end` and forget the token."""
        if self.active:
            self.active = False
            self.server.progress_cancel_handlers.pop(self.token, None)
            self.server.work_done_progress.tokens.pop(self.token, None)
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message[:200]))
