"""The ACP agent's message transports: stdio (newline-delimited JSON) checked line by line, and the way out.

The SDK's Connection takes any object with send/receive/close (acp._transport.Transport). CheckedTransport is
one: it reads lines with bounded memory, answers the bad ones itself (wire.check_message) and hands the SDK only
valid JSON-RPC objects, so no line a client sends can end the agent (see wire.py for the SDK's defects).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from typing import Any, BinaryIO

from lsp_agent.acp.wire import MAX_MESSAGE_BYTES, check_message, oversized_reply

log = logging.getLogger(__name__)

SNIFF_BYTES = 1024  # how much of an oversized line is kept to find its request id
READ_CHUNK = 256 * 1024


class LineSource:
    """Lines of a byte stream, each at most `limit` bytes; a longer one is skipped as it streams by (never held)
    and reported by its first bytes and size."""

    def __init__(self, reader: asyncio.StreamReader, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.reader = reader
        self.limit = limit
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline
        self._skipped: tuple[bytes, int] | None = None  # (first bytes, size so far) of a line being skipped
        self._eof = False

    async def next_line(self) -> bytes | tuple[bytes, int] | None:
        """The next line; (first bytes, size) for an oversized one; None at the end of the stream."""
        while True:
            end = self._buf.find(b"\n", self._scanned)
            if end >= 0 or (self._eof and (self._buf or self._skipped)):
                end = len(self._buf) if end < 0 else end
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                self._scanned = 0
                if self._skipped is not None or len(line) > self.limit:
                    prefix, size = self._skipped or (line[:SNIFF_BYTES], 0)
                    self._skipped = None
                    return prefix, size + len(line)
                return line
            if self._eof:
                return None
            self._scanned = len(self._buf)
            if len(self._buf) > self.limit:
                prefix, size = self._skipped or (bytes(self._buf[:SNIFF_BYTES]), 0)
                self._skipped = (prefix, size + len(self._buf))
                self._buf.clear()
                self._scanned = 0
            chunk = await self.reader.read(READ_CHUNK)
            if chunk:
                self._buf += chunk
            else:
                self._eof = True


class CheckedTransport:
    """An acp Transport over a reader and a writer of newline-delimited JSON that refuses bad lines itself."""

    def __init__(self, source: LineSource, write: Any) -> None:
        self.source = source
        self._write = write  # async callable taking the bytes of one line
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a line (ensure_ascii: a lone surrogate from a client cannot break the encoding)."""
        if self._closed:
            raise ConnectionError("the ACP transport is closed")
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")
        async with self._lock:
            await self._write(data)

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message (None at the end of input); invalid lines are answered here and skipped."""
        while True:
            line = await self.source.next_line()
            if line is None:
                return None
            if isinstance(line, tuple):
                log.warning("discarded a message of more than %d bytes", line[1])
                message, replies = None, [oversized_reply(*line)]
            elif not line.strip():
                continue
            else:
                message, replies = check_message(line)
            for reply in replies:
                await self._reply(reply)
            if message is not None:
                return message

    async def _reply(self, reply: dict[str, Any]) -> None:
        """Send an error response of the transport's own (logged; a gone client is no error here)."""
        log.warning("refused a client message: %s", reply["error"]["message"])
        try:
            await self.send(reply)
        except (ConnectionError, OSError) as exc:
            log.info("could not answer the client: %s", exc)

    async def close(self) -> None:
        """No more sends (the streams themselves belong to the process)."""
        self._closed = True


async def stdio_transport(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> CheckedTransport:
    """A CheckedTransport on this process's stdin/stdout (pipes through the event loop; files from a thread)."""
    loop = asyncio.get_running_loop()
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):  # a regular file or a terminal: read it in a daemon thread
        _feed_from_thread(loop, reader, stdin)
    try:
        protocol = asyncio.streams.FlowControlMixin()
        transport, _ = await loop.connect_write_pipe(lambda: protocol, stdout)
        transport.set_write_buffer_limits(high=0)  # a send returns once the pipe took it: none lost at exit
        writer = asyncio.StreamWriter(transport, protocol, None, loop)

        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

    except (ValueError, OSError):  # a regular file: plain blocking writes

        async def write(data: bytes) -> None:
            stdout.write(data)
            stdout.flush()

    return CheckedTransport(LineSource(reader), write)


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, stream: BinaryIO
) -> None:
    """Feed `reader` from a daemon thread (it never keeps the process alive)."""

    def pump() -> None:
        read = getattr(stream, "read1", stream.read)
        try:
            while data := read(READ_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, data)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()
