"""A raw-bytes ACP peer for `python -m lsp_agent acp`: send any line, read the agent's JSON lines with a timeout."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class RawAcp:
    """The agent over stdio; its permission questions are answered with `permission_answer` (a raw result)."""

    def __init__(self, env: dict[str, str], cwd: Path, permission_answer: Any = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "acp"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.permission_answer = permission_answer or {
            "outcome": {"outcome": "selected", "optionId": "allow_once"}
        }
        self.replies: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.questions: list[dict] = []
        self.stderr: list[str] = []
        self._next_id = 1000
        self._write_lock = threading.Lock()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.questions.append(message)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.permission_answer})
            elif "method" in message:
                self.notifications.append(message)
            else:
                self.replies.put(message)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (add the newline yourself)."""
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        """Write one JSON line."""
        self.send_raw(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: Any, timeout: float = 60) -> dict:
        """Send a request and return its response (result or error)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        reply = self.reply(timeout)
        assert reply.get("id") == self._next_id, reply
        return reply

    def reply(self, timeout: float = 30) -> dict:
        """The next response the agent sends."""
        return self.replies.get(timeout=timeout)

    def no_reply(self, wait: float = 0.5) -> bool:
        """True when no response arrives within `wait` seconds."""
        try:
            extra = self.replies.get(timeout=wait)
        except queue.Empty:
            return True
        self.replies.put(extra)
        return False

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
