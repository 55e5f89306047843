"""A minimal blocking LSP client over a subprocess's stdio, for the server benchmarks (no pytest-lsp overhead)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OURS = [sys.executable, "-m", "lsp_agent", "serve"]
BARE_SOURCE = """
from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")

@server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
def code_action(ls, params):
    return []

server.start_io()
"""
BARE = [sys.executable, "-c", BARE_SOURCE]


class WireClient:
    """Spawns a server and speaks JSON-RPC to it; server requests are answered with null."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
        # a private home: the user's ~/.config/lsp-agent (MCP servers, ...) must not change what is measured
        self._home = tempfile.TemporaryDirectory(prefix="lsp-agent-bench-home-")
        full_env["HOME"] = full_env["XDG_CONFIG_HOME"] = self._home.name
        full_env.update(env or {})
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._next = 0
        self.notifications: list[dict] = []

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server closed its stdout")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result (collecting notifications, answering server requests)."""
        self._next += 1
        my_id = self._next
        self.send({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == my_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")
            self._handle(message)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _handle(self, message: dict) -> None:
        if "method" in message and "id" in message:  # a request from the server
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)

    def wait_notification(self, predicate, timeout: float = 600) -> dict:  # noqa: ANN001
        """Read until a notification matches."""
        deadline = time.monotonic() + timeout
        for note in self.notifications:
            if predicate(note):
                return note
        while time.monotonic() < deadline:
            message = self.read()
            self._handle(message)
            if "method" in message and "id" not in message and predicate(message):
                return message
        raise TimeoutError("notification never came")

    def initialize(self, root: Path, options: dict | None = None, capabilities: dict | None = None) -> float:
        """initialize + initialized; returns the initialize round trip in seconds."""
        started = time.perf_counter()
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": capabilities or {},
                "initializationOptions": options or {},
            },
        )
        elapsed = time.perf_counter() - started
        self.notify("initialized", {})
        return elapsed

    def rss_mb(self) -> tuple[float, float]:
        """(current RSS, peak RSS) of the server process in MB."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far, all threads (from /proc/<pid>/task/*/schedstat, in ns)."""
        total = 0
        for stat in Path(f"/proc/{self.proc.pid}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[0])
            except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
                continue
        return total / 1e9

    def wait_idle(self, timeout: float = 60) -> None:
        """Wait until the process stops using CPU (imports done, blocked on stdin)."""
        stat = Path(f"/proc/{self.proc.pid}/stat")
        last, quiet, deadline = -1, 0, time.monotonic() + timeout
        while quiet < 3 and time.monotonic() < deadline:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            used = int(fields[11]) + int(fields[12])
            quiet = quiet + 1 if used == last and fields[0] == "S" else 0
            last = used
            time.sleep(0.05)

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self._home.cleanup()


def percentile(values: list[float], pct: float) -> float:
    """The pct-th percentile (nearest rank)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]
