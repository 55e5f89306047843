"""Bounded capture of a child's output and the truncation marker the model sees."""

from __future__ import annotations

import codecs
import threading
from collections import deque
from collections.abc import Callable
from typing import BinaryIO

DEFAULT_MAX_CHARS = 12_000


class BoundedCapture:
    """Drains a pipe in a thread, keeping the first and last `limit // 2` bytes and counting the rest; `on_text`
    (when given) gets each piece of output as text the moment it is read (from the draining thread)."""

    def __init__(
        self, stream: BinaryIO, limit: int = 256_000, on_text: Callable[[str], None] | None = None
    ) -> None:
        self._stream = stream
        self._on_text = on_text
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._half = max(1, limit // 2)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        """Read until EOF."""
        try:
            while (
                chunk := self._stream.read1(65536)
                if hasattr(self._stream, "read1")
                else self._stream.read(65536)
            ):
                self._add(chunk)
                self._tell(chunk)
        except (OSError, ValueError):
            pass

    def _tell(self, chunk: bytes) -> None:
        """Hand a piece of output to `on_text` (a UTF-8 character split between reads waits for its end)."""
        if self._on_text is None:
            return
        text = self._decoder.decode(chunk)
        if text:
            try:
                self._on_text(text)
            except Exception:  # noqa: BLE001 - a listener's failure must not stop the capture
                self._on_text = None

    def _add(self, chunk: bytes) -> None:
        """Keep the head, a rolling tail, and the total size."""
        with self._lock:
            self.total += len(chunk)
            room = self._half - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self._tail.append(chunk)
                self._tail_size += len(chunk)
                while self._tail_size - len(self._tail[0]) >= self._half:
                    self._tail_size -= len(self._tail.popleft())

    def join(self, timeout: float | None = None) -> None:
        """Wait for EOF (the pipe closes when every process holding it is gone)."""
        self._thread.join(timeout)

    def take(self) -> str:
        """Everything captured so far as text, with a marker where the middle was dropped; resets the buffer."""
        with self._lock:
            head, tail = bytes(self._head), b"".join(self._tail)
            kept = len(head) + len(tail)
            dropped = self.total - kept
            if len(tail) > self._half:
                dropped += len(tail) - self._half
                tail = tail[-self._half :]
            self._head.clear()
            self._tail.clear()
            self._tail_size = 0
            self.total = 0
        text = head.decode("utf-8", "replace")
        if dropped > 0:
            text += f"\n[... {dropped:,} bytes of output cut ...]\n"
        return text + tail.decode("utf-8", "replace")


def truncate_middle(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Keep the start and end of a long text with a marker saying how much was cut from the middle."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut:,} characters cut; the output was {len(text):,} characters ...]\n{text[-half:]}"
