"""A raw-bytes LSP peer for `python -m lsp_agent serve`: send any bytes, read framed replies with a timeout."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from raw_peer import RawPeer
from server_editor import REPO, server_env


def frame(payload: Any) -> bytes:
    """A message with its Content-Length header (payload: bytes as is, anything else as JSON)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer(RawPeer):
    """The server over stdio (Content-Length framing); server requests (progress, configuration, registration) are
    answered with null."""

    def __init__(self, cache: Path, root: Path | None = None) -> None:
        self.root = root
        self._next_id = 1000
        super().__init__([sys.executable, "-m", "lsp_agent", "serve"], REPO, server_env(cache))

    frame = staticmethod(frame)

    def messages(self, out: IO[bytes]) -> Iterator[dict]:
        """Each header block's Content-Length bytes, as JSON."""
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            yield json.loads(out.read(length))

    def answer(self, request: dict) -> None:
        """null, whatever the server asks."""
        return None

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
