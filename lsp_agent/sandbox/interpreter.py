"""A long-lived Python process in the sandbox so variables survive between CodeAct steps."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.sandbox.output import BoundedCapture, truncate_middle
from lsp_agent.sandbox.runner import kill_group
from lsp_agent.sandbox.scratch import ChangeReport

if TYPE_CHECKING:
    from lsp_agent.sandbox.session import Sandbox
    from lsp_agent.workspace.overlay import Overlay

CHILD_SOURCE = (Path(__file__).with_name("interpreter_child.py")).read_text(encoding="utf-8")
START_TIMEOUT = 20.0


class InterpreterError(RuntimeError):
    """The interpreter could not be started or stopped answering."""


@dataclass
class StepResult:
    """The outcome of one code step: printed output, the error (traceback), the final expression's value."""

    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    value: str | None = None
    seconds: float = 0.0
    timed_out: bool = False
    cancelled: bool = False
    restarted: bool = False  # the process died and its variables are gone
    changes: ChangeReport = field(default_factory=ChangeReport)

    @property
    def ok(self) -> bool:
        """True when the code ran without an exception or a kill."""
        return self.error is None and not self.timed_out and not self.cancelled

    def format(self, timeout: float, max_chars: int = 12_000) -> str:
        """The observation for the model."""
        parts: list[str] = []
        if self.stdout:
            parts.append(truncate_middle(self.stdout.rstrip("\n"), max_chars // 2))
        if self.value is not None:
            parts.append(truncate_middle(self.value, max_chars // 4))
        if self.stderr:
            parts.append("--- stderr ---\n" + truncate_middle(self.stderr.rstrip("\n"), max_chars // 4))
        if self.timed_out:
            parts.append(
                f"Error: killed after the {timeout:g} s time limit; the interpreter was restarted and "
                "every variable was lost (define them again)"
            )
        elif self.cancelled:
            parts.append("Error: the run was cancelled")
        elif self.error:
            parts.append("Error: " + truncate_middle(self.error, max_chars // 4))
        if self.restarted and not self.timed_out:
            parts.append("Note: the interpreter had stopped and was restarted; earlier variables are gone")
        if not parts:
            parts.append("(no output)")
        described = self.changes.describe()
        if described:
            parts.append(described)
        return "\n".join(parts)


class PersistentInterpreter:
    """A child `python` in the sandbox speaking a JSON line protocol; one namespace for the whole run."""

    def __init__(self, sandbox: Sandbox, *, timeout: float) -> None:
        self.sandbox = sandbox
        self.timeout = timeout
        self.limits = sandbox.limits(timeout)
        # CPU seconds accumulate over the interpreter's life: give it the whole run's worth, the wall clock
        # of each step is enforced here.
        self.limits = type(self.limits)(
            wall_seconds=timeout, cpu_seconds=int(max(timeout, 1) * 50), memory_mib=self.limits.memory_mib,
            file_size_mib=self.limits.file_size_mib, processes=self.limits.processes,
        )  # fmt: skip
        launch = sandbox.prepare([sandbox.python().executable, "-u", "-c", CHILD_SOURCE])
        self._proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=True,
            preexec_fn=self.limits.preexec(),  # noqa: PLW1509 - rlimits between fork and exec
        )
        self._stderr = BoundedCapture(self._proc.stderr, 64_000)  # type: ignore[arg-type]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        self._buffer = b""
        self._lock = threading.Lock()
        hello = self._read_line(time.monotonic() + START_TIMEOUT, None)
        if hello is None:
            self.close()
            raise InterpreterError(f"the sandboxed interpreter did not start: {self._stderr.take().strip()}")

    @property
    def alive(self) -> bool:
        """True while the child process runs."""
        return self._proc.poll() is None

    def execute(self, code: str, overlay: Overlay, *, cancel: threading.Event | None = None) -> StepResult:
        """Run code in the persistent namespace; the files it changes become overlay writes."""
        with self._lock:
            start = time.monotonic()
            result = StepResult()
            if not self.alive:
                raise InterpreterError("the interpreter has stopped")
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write((json.dumps({"code": code}) + "\n").encode("utf-8"))
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise InterpreterError("the interpreter has stopped") from None
            line = self._read_line(start + self.timeout, cancel)
            result.seconds = time.monotonic() - start
            if line is None:
                if cancel is not None and cancel.is_set():
                    result.cancelled = True
                elif self.alive:
                    result.timed_out = True
                else:
                    result.error = f"the interpreter died (exit status {self._proc.returncode})"
                    result.restarted = True
                self.close()
            else:
                reply = json.loads(line)
                result.stdout = reply.get("stdout") or ""
                result.error = reply.get("error")
                result.value = reply.get("value")
            time.sleep(0.01)  # let output written straight to stderr arrive
            result.stderr = self._stderr.take()
            result.changes = self.sandbox.scratch.collect_changes(overlay, self.sandbox.hide)
            return result

    def _read_line(self, deadline: float, cancel: threading.Event | None) -> str | None:
        """One protocol line, or None at the deadline, on cancel or when the child exits."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (cancel is not None and cancel.is_set()):
                return None
            if not self._selector.select(timeout=min(remaining, 0.1)):
                continue
            chunk = os.read(self._proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def close(self) -> None:
        """Kill the child's process group and release the pipes."""
        kill_group(self._proc)  # also when it exited: helpers the code left behind share its group
        try:
            self._selector.close()
        except (OSError, ValueError):
            pass
        for pipe in (self._proc.stdin, self._proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
