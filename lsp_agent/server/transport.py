"""Stdio and TCP transports that read on the event loop itself and frame with bounded memory.

pygls reads stdin with one worker-thread call per header line and per body (three thread hops per message, each
a GIL handoff that waits up to the 5 ms switch interval while an indexing thread runs). Here stdin is a pipe the
event loop watches: bytes arrive in data_received, MessageFramer cuts them into bodies, AgentProtocol handles them.
When stdin is no pipe (a regular file), a worker thread reads it in large chunks instead.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from lsp_agent.server.framing import FramingError, MessageFramer
from lsp_agent.server.wire import AgentProtocol

log = logging.getLogger(__name__)

READ_CHUNK = 256 * 1024
# The loop thread waits up to this long for the GIL when it wakes while an indexing thread runs (Python's
# default is 5 ms, paid on every wake-up of an editor request).
GIL_SWITCH_SECONDS = 0.001


class EditorActivity:
    """Whether the event loop is busy with the editor's messages right now; background work yields to it.

    Two CPU-bound Python threads share the GIL half and half, so an indexing thread would double the time every
    editor request takes. The indexing thread calls yield_to_editor() between files instead: while the loop
    handles a burst of messages it sleeps (releasing the GIL), so the editor's work runs at full speed.
    """

    MAX_PAUSE = 0.25  # a pause never lasts longer, so background work cannot starve

    def __init__(self) -> None:
        self._idle = threading.Event()
        self._idle.set()

    @property
    def busy(self) -> bool:
        """True while the loop handles editor messages."""
        return not self._idle.is_set()

    @busy.setter
    def busy(self, value: bool) -> None:
        if value:
            self._idle.clear()
        else:
            self._idle.set()

    def yield_to_editor(self) -> None:
        """Wait (without holding the GIL) while the loop is handling editor messages; called by background threads."""
        self._idle.wait(self.MAX_PAUSE)


class FramedReader(asyncio.Protocol):
    """Feeds a byte stream to the server's protocol; `closed` resolves when the stream ends."""

    def __init__(
        self,
        protocol: AgentProtocol,
        stop: threading.Event,
        *,
        replies_here: bool = False,
        activity: EditorActivity | None = None,
    ) -> None:
        self.protocol = protocol
        self.stop = stop
        self.activity = activity or EditorActivity()
        self.replies_here = replies_here  # a socket: replies go back through the same transport
        self.framer = MessageFramer()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.replies_here:
            self.protocol.set_writer(transport)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        """Handle every message these bytes complete."""
        self.activity.busy = True
        try:
            for item in self.framer.feed(data):
                if self.stop.is_set():
                    return
                if isinstance(item, FramingError):
                    self.protocol.handle_framing_error(item)
                else:
                    self.protocol.handle_body(item)
        finally:
            self.activity.busy = False

    def eof_received(self) -> bool:
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            log.warning("the client connection failed: %s", exc)
        if not self.closed.done():
            self.closed.set_result(None)


async def _read_stdin(stdin: BinaryIO, reader: FramedReader) -> None:
    """Deliver stdin to `reader` until EOF: through the loop when it is a pipe, else from a worker thread."""
    loop = asyncio.get_running_loop()
    try:
        if not _pollable(stdin):  # the loop's selector cannot wait on it: it would never see its end
            raise ValueError("not a pipe, socket or terminal")
        transport, _ = await loop.connect_read_pipe(lambda: reader, stdin)
    except (ValueError, OSError) as exc:  # a regular file, /dev/null: read it in a thread
        log.info("stdin is no pipe (%s): reading it in a worker thread", exc)
        read = getattr(stdin, "read1", stdin.read)
        while not reader.stop.is_set():
            data = await loop.run_in_executor(None, read, READ_CHUNK)
            if not data:
                break
            reader.data_received(data)
        return
    try:
        await reader.closed
    finally:
        transport.close()


def _pollable(stdin: BinaryIO) -> bool:
    """Whether the event loop can wait on stdin: a pipe, a socket or a terminal (not a file or /dev/null)."""
    try:
        fd = stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both OSError and ValueError
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class HardenedServer(LanguageServer):
    """A pygls LanguageServer speaking through AgentProtocol and the framed transports of this module."""

    def __init__(self, name: str, version: str, **kwargs: Any) -> None:
        kwargs.setdefault("protocol_cls", AgentProtocol)
        super().__init__(name, version, **kwargs)
        self.activity = EditorActivity()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A failed notification handler goes to the log and the client's output, not into an error pop-up.

        (pygls shows "Error in server: ..." for each one; a didChange for a document that is not open would
        otherwise interrupt the user with a message they cannot act on.) Request errors are in their responses.
        """
        if source is FeatureRequestError:
            return
        log.warning("handling a notification failed: %s", error)
        try:
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Warning, message=f"lsp-agent: a notification failed: {error}"
                )
            )
        except Exception:  # no transport any more: the log line is all there is
            pass

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdin/stdout until the client exits or closes the stream."""
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            reader = FramedReader(self.protocol, self._stop_event, activity=self.activity)  # type: ignore[arg-type]
            await _read_stdin(stdin or sys.stdin.buffer, reader)

        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("the connection to the client is lost: shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP (the server stops when it disconnects)."""
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        self._stop_event = stop = threading.Event()

        async def serve() -> None:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def connected() -> FramedReader:
                reader = FramedReader(self.protocol, stop, replies_here=True, activity=self.activity)  # type: ignore[arg-type]
                reader.closed.add_done_callback(lambda _: done.done() or done.set_result(None))
                return reader

            server = await asyncio.get_running_loop().create_server(connected, host, port)
            self._server = server
            bound = ", ".join(_address(s.getsockname()) for s in server.sockets)
            print(f"lsp-agent serve: listening on {bound}", file=sys.stderr, flush=True)  # port 0 picks one
            async with server:
                await done

        try:
            asyncio.run(serve())
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            pass
        finally:
            self.shutdown()


def _address(sockname: tuple) -> str:
    """HOST:PORT of a bound socket ([HOST]:PORT for IPv6)."""
    host, port = sockname[0], sockname[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
