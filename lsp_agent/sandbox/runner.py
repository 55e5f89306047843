"""Run one command in the sandbox: own process group, wall-clock timeout, rlimits, scrubbed environment."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lsp_agent.sandbox.limits import ResourceLimits
from lsp_agent.sandbox.output import BoundedCapture, truncate_middle
from lsp_agent.sandbox.scratch import ChangeReport

KILL_GRACE = 0.5


@dataclass
class ExecResult:
    """What a sandboxed command did: exit status, output, timing, and the files it changed."""

    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    cancelled: bool = False
    changes: ChangeReport = field(default_factory=ChangeReport)
    isolation: list[str] = field(default_factory=list)
    error: str | None = None
    container: bool = False  # True only when the command really ran in a Docker container

    @property
    def ok(self) -> bool:
        """True when the command ran to completion with exit status 0."""
        return self.exit_code == 0 and not self.timed_out and not self.cancelled and self.error is None

    def status_line(self, timeout: float) -> str:
        """How the command ended, in words."""
        if self.error:
            return f"could not run: {self.error}"
        if self.timed_out:
            return f"killed: wall-clock timeout of {timeout:g} s reached; the whole process group was killed"
        if self.cancelled:
            return "killed: the run was cancelled"
        if self.exit_code is not None and self.exit_code < 0:
            name = _signal_name(-self.exit_code)
            hint = " (CPU time limit reached)" if name == "SIGXCPU" else ""
            hint = " (file size limit reached)" if name == "SIGXFSZ" else hint
            return f"killed by {name}{hint}"
        return f"exit status: {self.exit_code}"

    def format(self, timeout: float, max_chars: int = 12_000) -> str:
        """The observation for the model: status, stdout, stderr (cut when long), changed files, isolation."""
        parts = [self.status_line(timeout) + f" ({self.seconds:.2f} s)"]
        budget = max_chars // 2
        if self.stdout:
            parts.append("--- stdout ---\n" + truncate_middle(self.stdout.rstrip("\n"), budget))
        if self.stderr:
            parts.append("--- stderr ---\n" + truncate_middle(self.stderr.rstrip("\n"), budget))
        if not self.stdout and not self.stderr and not self.error:
            parts.append("(no output)")
        described = self.changes.describe()
        if described:
            parts.append(described)
        if self.isolation:
            parts.append("--- sandbox ---\n" + "\n".join(self.isolation))
        return "\n".join(parts)


def _signal_name(number: int) -> str:
    """SIGKILL for 9, and so on."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process's whole group (it leads its own session), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _wait_or_kill(
    proc: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None
) -> tuple[bool, bool]:
    """Wait for the process to exit; kill its group at the deadline or on cancel. (timed out, cancelled)."""
    timed_out = cancelled = False
    waiter = _ExitWaiter(proc)
    while not waiter.wait(0.05):
        if time.perf_counter() >= deadline:
            timed_out = True
        elif cancel is not None and cancel.is_set():
            cancelled = True
        if timed_out or cancelled:
            kill_group(proc)
            break
    waiter.close()
    return timed_out, cancelled


def run_process(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: str,
    limits: ResourceLimits,
    stdin: str | None = None,
    cancel: threading.Event | None = None,
    capture_limit: int = 256_000,
    on_output: Callable[[str], None] | None = None,
) -> ExecResult:
    """Start argv in a new session with rlimits; kill the group at the wall-clock limit or on cancel.

    `on_output` gets stdout and stderr as they come (from reader threads), before the run ends."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=limits.preexec(),  # noqa: PLW1509 - rlimits must be set between fork and exec
        )
    except OSError as exc:
        return ExecResult(
            list(argv), None, "", "", time.perf_counter() - start, error=f"{argv[0]}: {exc.strerror}"
        )
    out = BoundedCapture(proc.stdout, capture_limit, on_output)  # type: ignore[arg-type]
    err = BoundedCapture(proc.stderr, capture_limit, on_output)  # type: ignore[arg-type]
    if stdin is not None and proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    timed_out, cancelled = _wait_or_kill(proc, start + limits.wall_seconds, cancel)
    # Children that outlived the leader still hold the pipes: kill the rest of the group before reading on.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    out.join(KILL_GRACE + 2)
    err.join(KILL_GRACE)
    return ExecResult(
        list(argv),
        proc.returncode,
        out.take(),
        err.take(),
        time.perf_counter() - start,
        timed_out=timed_out,
        cancelled=cancelled,
    )


class _ExitWaiter:
    """wait(seconds) -> True once the process has exited, woken the moment it exits through a pidfd where the
    kernel has them (Popen.wait(timeout) polls with sleeps that add up to tens of ms to every run)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        try:
            self.pidfd: int | None = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for the exit."""
        if self.pidfd is not None and self.proc.returncode is None:
            select.select([self.pidfd], [], [], seconds)
            return self.proc.poll() is not None
        try:
            self.proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def close(self) -> None:
        """Release the pidfd."""
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _feed(pipe, text: str) -> None:  # type: ignore[no-untyped-def]
    """Write stdin text and close the pipe (in a thread so a child that never reads cannot block us)."""
    try:
        pipe.write(text.encode("utf-8"))
        pipe.close()
    except (OSError, ValueError):
        pass
