"""Exec tools' output as it comes: the tail of a running command's output, redacted, at most every OUTPUT_INTERVAL.

A front-end that shows output live (ACP's tool call card) puts a listener in the tool context's extras under
EXEC_OUTPUT; run_command, run_python and run_tests then hand it the output so far while the command runs. The
model still gets the whole result (cut in the middle) when the command ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

EXEC_OUTPUT = "exec_output"  # ToolContext.extras key of the listener: (output so far) -> None, thread-safe
OUTPUT_INTERVAL = 0.1  # seconds between two updates (a chatty command does not flood the editor)
TAIL_CHARS = 4000  # the listener sees at most the last this many characters


class OutputTail:
    """Collects a command's output (from its reader threads) and tells the listener its redacted tail."""

    def __init__(self, listener: Callable[[str], None], redact: Callable[[str], str]) -> None:
        self.listener = listener
        self.redact = redact
        self.text = ""
        self.dropped = 0  # characters of the head no longer kept
        self._told = 0.0
        self._pending = False
        self._timer: threading.Timer | None = None  # flushes what came within an interval once it is over
        self._lock = threading.Lock()

    def add(self, piece: str) -> None:
        """One piece of stdout or stderr; the listener hears of it now or at the next interval."""
        with self._lock:
            self.text += piece
            if len(self.text) > 2 * TAIL_CHARS:
                self.dropped += len(self.text) - TAIL_CHARS
                self.text = self.text[-TAIL_CHARS:]
            self._pending = True
            wait = OUTPUT_INTERVAL - (time.monotonic() - self._told)
            if wait > 0 and self._timer is None:
                self._timer = threading.Timer(wait, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if wait <= 0:
            self.flush()

    def flush(self) -> None:
        """Tell the listener the output so far, if anything came since it was last told (in order: one at a time)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._pending:
                return
            self._pending, self._told = False, time.monotonic()
            tail, dropped = self.text[-TAIL_CHARS:], self.dropped + max(0, len(self.text) - TAIL_CHARS)
            shown = self.redact(tail)
            try:
                self.listener(f"[... {dropped:,} characters before ...]\n{shown}" if dropped else shown)
            except Exception as exc:  # noqa: BLE001 - showing output live is a courtesy; the result still comes
                log.warning("live exec output stops: its listener failed (%s)", exc)
                self.listener = lambda _text: None
