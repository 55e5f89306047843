"""Cancelling a run from any thread: checked between steps, and an in-flight model request or tool wait is aborted."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from lsp_agent.agent.outcome import cancelled

T = TypeVar("T")


class Cancellation:
    """A run's cancel flag plus the one awaitable in flight, which cancel() aborts at once."""

    def __init__(self) -> None:
        self.flag = threading.Event()  # tools (sandbox, interpreter) poll it too
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: asyncio.Future[Any] | None = None
        self._lock = threading.Lock()

    @property
    def is_set(self) -> bool:
        """True once cancel() was called."""
        return self.flag.is_set()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop the run's awaits happen on (cancel() may come from another thread)."""
        self._loop = loop

    def cancel(self) -> None:
        """Set the flag and abort whatever the run is awaiting."""
        self.flag.set()
        with self._lock:
            loop, task = self._loop, self._inflight
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    def check(self) -> None:
        """Raise StopRun("cancelled") once cancelled."""
        if self.flag.is_set():
            raise cancelled()

    async def guard(self, awaitable: Awaitable[T]) -> T:
        """Await a model request or tool call so that cancel() can abort it (then StopRun("cancelled"))."""
        task = asyncio.ensure_future(awaitable)
        with self._lock:
            self._inflight = task
        if self.flag.is_set():
            task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            if self.flag.is_set():
                raise cancelled() from None
            raise
        finally:
            with self._lock:
                self._inflight = None
