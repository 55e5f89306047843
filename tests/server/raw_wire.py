"""A raw-bytes LSP peer for `python -m lsp_agent serve`: send any bytes, read framed replies with a timeout."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from server_editor import REPO, server_env


def frame(payload: Any) -> bytes:
    """A message with its Content-Length header (payload: bytes as is, anything else as JSON)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """The server over stdio; server requests (progress, configuration, registration) are answered with null."""

    def __init__(self, cache: Path, root: Path | None = None) -> None:
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "serve"],
            cwd=REPO,
            env=server_env(cache),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.stderr: list[str] = []
        self._next_id = 1000
        self._write_lock = threading.Lock()  # the reader thread answers server requests too
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # ----- reading --------------------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            else:
                self.replies.put(message)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def reply(self, timeout: float = 30) -> dict:
        """The next response (result or error) the server sends."""
        return self.replies.get(timeout=timeout)

    def no_reply(self, wait: float = 0.5) -> bool:
        """True when no response arrives within `wait` seconds."""
        try:
            extra = self.replies.get(timeout=wait)
        except queue.Empty:
            return True
        self.replies.put(extra)
        return False

    # ----- sending --------------------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, payload: Any) -> None:
        self.write(frame(payload))

    def request(self, method: str, params: Any = None) -> dict:
        """Send a well-formed request and return its response (result or error)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.reply()
        assert reply.get("id") == self._next_id, f"expected the answer to {method}, got {reply}"
        return reply

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path) -> dict:
        """initialize + initialized on one workspace folder."""
        self.root = root
        reply = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {},
            },
        )
        self.notify("initialized", {})
        return reply

    def still_answers(self) -> None:
        """A normal request right after: the server is alive and in step."""
        reply = self.request("workspace/executeCommand", {"command": "lspAgent.status", "arguments": []})
        assert "result" in reply and "index" in reply["result"], reply

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
