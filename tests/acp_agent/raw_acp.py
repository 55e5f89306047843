"""A raw-bytes ACP peer for `python -m lsp_agent acp`: send any line, read the agent's JSON lines with a timeout."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from raw_peer import RawPeer


class RawAcp(RawPeer):
    """The agent over stdio (JSON lines); its permission questions are answered with `permission_answer` (a raw
    result)."""

    def __init__(self, env: dict[str, str], cwd: Path, permission_answer: Any = None) -> None:
        self.permission_answer = permission_answer or {
            "outcome": {"outcome": "selected", "optionId": "allow_once"}
        }
        self.questions: list[dict] = []
        self._next_id = 1000
        super().__init__([sys.executable, "-m", "lsp_agent", "acp"], cwd, env)

    def frame(self, payload: Any) -> bytes:
        """One JSON line."""
        return json.dumps(payload).encode() + b"\n"

    def messages(self, out: IO[bytes]) -> Iterator[dict]:
        """One message a line."""
        return (json.loads(line) for line in out)

    def answer(self, request: dict) -> Any:
        """Every request of the agent is a permission question here."""
        self.questions.append(request)
        return self.permission_answer

    def request(self, method: str, params: Any, timeout: float = 60) -> dict:
        """Send a request and return its response (result or error)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        reply = self.reply(timeout)
        assert reply.get("id") == self._next_id, reply
        return reply

    def initialize(self) -> dict:
        """A valid initialize; its result."""
        reply = self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert "result" in reply, reply
        return reply["result"]

    def children(self) -> set[int]:
        """The process ids of the agent's child processes (and theirs)."""
        found: set[int] = set()
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    kids = {int(k) for k in (task / "children").read_text().split()}
                except OSError:
                    continue
                todo += list(kids - found)
                found |= kids
        return found

    def close_stdin(self, timeout: float = 30) -> float:
        """Close stdin and return how long the agent took to exit."""
        assert self.proc.stdin is not None
        start = time.monotonic()
        self.proc.stdin.close()
        self.proc.wait(timeout)
        return time.monotonic() - start

    def kill(self) -> None:
        """Stop the agent if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def alive(pid: int) -> bool:
    """True while a process exists (and is no zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status and os.path.exists(f"/proc/{pid}")
