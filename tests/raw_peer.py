"""A raw-bytes JSON-RPC peer of an `lsp-agent` process over stdio: the base of the LSP and ACP wire tests' peers,
which differ only in framing (Content-Length headers, JSON lines) and in how they answer the process's requests."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


class RawPeer:
    """The process's stdin for any bytes, its responses in a queue, its notifications and stderr in lists."""

    def __init__(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.stderr: list[str] = []
        self._write_lock = threading.Lock()  # the reader thread answers the process's requests too
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def frame(self, payload: Any) -> bytes:
        """One message as the protocol frames it."""
        raise NotImplementedError

    def messages(self, out: IO[bytes]) -> Iterator[dict]:
        """The messages read from the process's stdout, unframed, until it closes."""
        raise NotImplementedError

    def answer(self, request: dict) -> Any:
        """The result sent back to a request of the process."""
        raise NotImplementedError

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for message in self.messages(self.proc.stdout):
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answer(message)})
            elif "method" in message:
                self.notifications.append(message)
            else:
                self.replies.put(message)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def write(self, data: bytes) -> None:
        """Write bytes as they are."""
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, payload: Any) -> None:
        """Write one framed message."""
        self.write(self.frame(payload))

    def reply(self, timeout: float = 30) -> dict:
        """The next response (result or error) the process sends."""
        return self.replies.get(timeout=timeout)

    def no_reply(self, wait: float = 0.5) -> bool:
        """True when no response arrives within `wait` seconds."""
        try:
            extra = self.replies.get(timeout=wait)
        except queue.Empty:
            return True
        self.replies.put(extra)
        return False
