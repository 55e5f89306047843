"""LSP base-protocol framing with bounded memory: bytes in, message bodies (or framing problems) out.

A message is `Content-Length: N\\r\\n` (other header lines allowed) `\\r\\n` then N bytes of JSON. The LSP specification
sets no size limit, and vscode-jsonrpc (vscode-languageserver-node's ReadableStreamMessageReader) sets none either:
it buffers whatever Content-Length announces and only logs a "partial message" after 10 s. A Python server doing
the same allocates the announced size up front, so `Content-Length: 1000000000000` ends it with a MemoryError.

Here a body above MAX_MESSAGE_BYTES is skipped as it streams by, never held; its request id is read from the first
bytes so the client gets an error for it. The stream can always be resynchronised: a header line
(`Content-Length: N` or `Content-Type: ...` followed by CR LF) can never occur inside a JSON text (JSON strings
cannot hold a raw CR or LF, and a header name is no JSON token), so a header appearing where body bytes were
expected marks the next message. That recovers from an oversized body, a Content-Length that overstates the body,
and garbage between messages, instead of closing the connection.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
SNIFF_BYTES = 1024  # how much of an oversized body is kept to find its request id
HEADER_LINE = re.compile(rb"(?:content-length|content-type)[ \t]*:[^\r\n]{0,200}\r\n", re.IGNORECASE)
CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*", re.IGNORECASE)
ANCHOR_OVERLAP = 240  # a header line split across two reads is still found
# The id of a request, when it comes first or after "jsonrpc"/"method" (as vscode-jsonrpc and pygls write them).
LEADING_ID = re.compile(
    rb'^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,200}"\s*,){0,2}\s*"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")'
)


@dataclass(frozen=True)
class FramingError:
    """A message that could not be delivered; `request_id` when its id could be read (None: unknown)."""

    reason: str
    request_id: int | str | None = None


def sniff_request_id(prefix: bytes) -> int | str | None:
    """The id of a request from the first bytes of its body (None when it is not at the front)."""
    match = LEADING_ID.match(prefix)
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


class MessageFramer:
    """Splits an LSP byte stream into message bodies; never holds more than max_bytes of one body."""

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._length: int | None = None  # body length of the message being read
        self._scanned = 0  # body bytes already searched for a header line
        self._skip = 0  # bytes of an oversized body still to skip
        self._skipped = 0
        self._sniff = bytearray()  # the first bytes of an oversized body (for its id)
        self._announced = 0  # the oversized body's Content-Length
        self._reported = False

    def feed(self, data: bytes) -> list[bytes | FramingError]:
        """Take the next bytes of the stream; returns the complete bodies (and framing errors) they finish."""
        self._buf += data
        out: list[bytes | FramingError] = []
        while True:
            if self._skip:
                if not self._skip_body(out):
                    return out
            elif self._length is None:
                if not self._read_headers():
                    return out
            elif not self._read_body(out):
                return out

    # ----- states -------------------------------------------------------------------------------------------

    def _read_headers(self) -> bool:
        """Parse one header block; False when more bytes are needed."""
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buf) > MAX_HEADER_BYTES:
                self._resync(1, "a header block longer than 8 KiB")
            return False
        block = bytes(self._buf[:end])
        match = CONTENT_LENGTH.search(block)
        if match is None:
            anchor = HEADER_LINE.search(self._buf, 1, end + 2)
            if anchor is not None and anchor.start() > 0:  # garbage, then a header: start again at the header
                self._drop(anchor.start(), "bytes before a message header")
            else:
                self._drop(end + 4, f"a header block without Content-Length ({block[:80]!r})")
            return True
        if match.start() > 0 and not block[: match.start()].endswith(b"\n"):
            self._drop(match.start(), "bytes before a message header")
            return True
        del self._buf[: end + 4]
        length = int(match.group(1))
        if length > self.max_bytes:
            self._skip, self._skipped, self._announced, self._reported = length, 0, length, False
            self._sniff.clear()
        else:
            self._length, self._scanned = length, 0
        return True

    def _read_body(self, out: list[bytes | FramingError]) -> bool:
        """Deliver the body once complete, or cut it at a header that shows the length was wrong."""
        assert self._length is not None
        have = min(len(self._buf), self._length)
        anchor = HEADER_LINE.search(self._buf, max(0, self._scanned - ANCHOR_OVERLAP), have)
        if anchor is not None:
            log.warning("a message body was cut short by the next header (its Content-Length was too large)")
            out.append(bytes(self._buf[: anchor.start()]))
            del self._buf[: anchor.start()]
            self._length = None
            return True
        self._scanned = have
        if len(self._buf) < self._length:
            return False
        out.append(bytes(self._buf[: self._length]))
        del self._buf[: self._length]
        self._length = None
        return True

    def _skip_body(self, out: list[bytes | FramingError]) -> bool:
        """Skip an oversized body as it arrives (stopping early at a header); report it once its id is known."""
        take = min(len(self._buf), self._skip)
        anchor = HEADER_LINE.search(self._buf, 0, take)
        if anchor is not None:
            take = anchor.start()
        if len(self._sniff) < SNIFF_BYTES:
            self._sniff += self._buf[: min(take, SNIFF_BYTES - len(self._sniff))]
        del self._buf[:take]
        self._skip -= take
        self._skipped += take
        done = anchor is not None or self._skip == 0
        if done:
            self._skip = 0
        request_id = sniff_request_id(bytes(self._sniff))
        if not self._reported and (done or request_id is not None or len(self._sniff) >= SNIFF_BYTES):
            self._reported = True
            out.append(
                FramingError(
                    f"the message of {self._announced} bytes exceeds lsp-agent's {_size(self.max_bytes)} limit and was "
                    "discarded (send smaller messages, e.g. do not open huge generated files)",
                    request_id,
                )
            )
        if done and self._skipped < self._announced:
            log.warning("an oversized message stopped after %d of %d bytes", self._skipped, self._announced)
        return done

    # ----- recovery -----------------------------------------------------------------------------------------

    def _resync(self, start: int, what: str) -> None:
        """Drop bytes up to the next header line at or after `start` (keeping a tail that may begin one)."""
        anchor = HEADER_LINE.search(self._buf, start)
        if anchor is not None:
            self._drop(anchor.start(), what)
        else:
            self._drop(max(0, len(self._buf) - ANCHOR_OVERLAP), what)

    def _drop(self, count: int, what: str) -> None:
        """Discard `count` buffered bytes that are no message, with a log line saying why."""
        if count > 0:
            log.warning("discarded %d bytes of the LSP stream: %s", count, what)
            del self._buf[:count]


def _size(count: int) -> str:
    """A byte count for people (64 MiB, 1000 bytes)."""
    return f"{count // (1024 * 1024)} MiB" if count >= 1024 * 1024 else f"{count} bytes"
