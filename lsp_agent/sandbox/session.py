"""One run's sandbox: the scratch copy, the isolation wrapper, the persistent interpreter, and their cleanup."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.sandbox.docker_backend import docker_requested, docker_status, run_in_docker
from lsp_agent.sandbox.environment import scrubbed_environment
from lsp_agent.sandbox.isolation import (
    MOUNT_FAILED,
    Isolation,
    bwrap_prefix,
    current_isolation,
    overlay_mount_prefix,
    overlay_safe_path,
    unshare_prefix,
)
from lsp_agent.sandbox.limits import ResourceLimits, limits_for
from lsp_agent.sandbox.python_env import PythonChoice, choose_python
from lsp_agent.sandbox.runner import ExecResult, run_process
from lsp_agent.sandbox.scratch import ScratchWorkspace
from lsp_agent.workspace.overlay import Overlay

if TYPE_CHECKING:
    from lsp_agent.sandbox.interpreter import PersistentInterpreter

log = logging.getLogger(__name__)
_LIVE: weakref.WeakSet[Sandbox] = weakref.WeakSet()


class Sandbox:
    """Executes code against a scratch copy of `root` showing the run's overlay; never writes to `root`."""

    def __init__(
        self,
        root: Path,
        *,
        exclude: Sequence[str] = (),
        isolation: Isolation | None = None,
        memory_mib: int = 4096,
        scratch_parent: Path | None = None,
        python: str | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.python_setting = python
        self.exclude = list(exclude)
        self.isolation = isolation or current_isolation()
        self.memory_mib = memory_mib
        self._scratch_parent = scratch_parent
        self._scratch: ScratchWorkspace | None = None
        self._interpreter: PersistentInterpreter | None = None
        self._overlay_failed = False  # the workspace's filesystem refused to be an overlay layer
        self.docker_note: str | None = None  # set when the Docker backend was asked for
        self.use_docker = False
        if docker_requested():
            self.use_docker, self.docker_note = docker_status()
        self._lock = threading.RLock()
        _LIVE.add(self)

    # ----- the scratch copy -----------------------------------------------------------------------------

    @property
    def scratch(self) -> ScratchWorkspace:
        """The scratch copy, made on first use."""
        with self._lock:
            if self._scratch is None:
                use_overlay = (
                    self.isolation.overlay
                    and overlay_safe_path(self.root)
                    and not self.use_docker
                    and not self._overlay_failed
                )
                self._scratch = ScratchWorkspace(
                    self.root, mode="overlay" if use_overlay else "copy", exclude=self.exclude,
                    parent=self._scratch_parent,
                )  # fmt: skip
                _LIVE.add(self)  # again after a close(): the sandbox may be reused
            return self._scratch

    def python(self) -> PythonChoice:
        """The interpreter for Python code and tests: the python setting, the workspace's venv, or the server's."""
        if self.use_docker:
            return PythonChoice("python", "container")
        return choose_python(self.root, self.python_setting)

    def describe(self, limits: ResourceLimits) -> list[str]:
        """The isolation in force, one fact per line, for the tool's result."""
        scratch = self.scratch
        lines = [
            f"workspace: scratch copy ({scratch.copy_method}) with the proposed edits applied; "
            "your real files are untouched",
            self.python().describe(),
        ]
        if self.use_docker:
            lines.append("container: Docker (network none, memory and process limits)")
        else:
            lines += [self.isolation.network_line(), self.isolation.filesystem_line()]
            if self.docker_note:
                lines.append(self.docker_note + "; using the local sandbox")
        lines.append(
            "environment: secrets removed (API keys, tokens, passwords, AWS_*); HOME is a private directory"
        )
        lines.append(limits.describe())
        return lines

    def wrap(self, argv: Sequence[str], cwd_rel: str = ".") -> tuple[list[str], str]:
        """The full argv (mount + isolation prefixes) and the cwd to start it in."""
        scratch = self.scratch
        cwd = (scratch.workspace / cwd_rel).resolve()
        prefix: list[str] = []
        if scratch.mode == "overlay":
            prefix += unshare_prefix(mount=True, net=not self.isolation.bwrap)
            prefix += overlay_mount_prefix(
                [scratch.staging, self.root],
                scratch.upper,
                scratch.work,
                scratch.workspace,
                scratch.deletions,
                cwd,
            )
            start_dir = str(scratch.base)
        else:
            if not self.isolation.bwrap and self.isolation.unshare_net:
                prefix += unshare_prefix(mount=False, net=True)
            start_dir = str(cwd)
        if self.isolation.bwrap:
            prefix += bwrap_prefix(scratch.base, cwd, expose=self.python().needed_paths())
        return prefix + list(argv), start_dir

    def environment(self) -> dict[str, str]:
        """The scrubbed environment of every child."""
        scratch = self.scratch
        env = scrubbed_environment(os.environ, home=str(scratch.home), tmpdir=str(scratch.tmp))
        venv = self.python().venv
        if venv is not None:  # as if activated: its bin/ first on PATH, so `python` and `pytest` are its own
            env["VIRTUAL_ENV"] = str(venv)
            env["PATH"] = os.pathsep.join(filter(None, [str(venv / "bin"), env.get("PATH", "")]))
            env.pop("PYTHONHOME", None)
        path = self._python_path(env.get("PYTHONPATH", ""))
        if path:
            env["PYTHONPATH"] = path
        return env

    def _python_path(self, inherited: str) -> str:
        """PYTHONPATH with entries inside the workspace moved to the scratch copy, plus its src/ when present.

        So imports load the proposed code even for a src-layout project installed in editable mode.
        """
        entries: list[str] = []
        for entry in filter(None, inherited.split(os.pathsep)):
            real = Path(entry).resolve()
            if real.is_relative_to(self.root):
                entry = str(self.scratch.workspace / real.relative_to(self.root))
            entries.append(entry)
        src = str(self.scratch.workspace / "src")
        if (self.root / "src").is_dir() and src not in entries:
            entries.insert(0, src)
        return os.pathsep.join(entries)

    def limits(self, timeout: float) -> ResourceLimits:
        """Resource limits for a run of `timeout` seconds."""
        return limits_for(timeout, memory_mib=self.memory_mib)

    # ----- running ----------------------------------------------------------------------------------------

    def run(
        self,
        argv: Sequence[str],
        overlay: Overlay,
        *,
        timeout: float,
        stdin: str | None = None,
        cwd_rel: str = ".",
        cancel: threading.Event | None = None,
    ) -> ExecResult:
        """Run argv in the scratch copy showing `overlay`; the files it changes become overlay writes."""
        limits = self.limits(timeout)
        with self._lock:
            self.close_interpreter()  # one mount of the copy at a time
            scratch = self.scratch
            scratch.sync_in(overlay)
            if self.use_docker:
                result = run_in_docker(
                    argv, scratch.workspace, limits=limits, env=self.environment(), stdin=stdin
                )
            else:
                full, start_dir = self.wrap(argv, cwd_rel)
                result = run_process(
                    full, env=self.environment(), cwd=start_dir, limits=limits, stdin=stdin, cancel=cancel
                )
            if scratch.mode == "overlay" and result.exit_code == 125 and MOUNT_FAILED in result.stderr:
                log.warning(
                    "overlay mount of %s failed (%s); using a copied scratch workspace",
                    self.root,
                    result.stderr,
                )
                self._overlay_failed = True
                scratch.close()
                self._scratch = None
                return self.run(argv, overlay, timeout=timeout, stdin=stdin, cwd_rel=cwd_rel, cancel=cancel)
            result.argv = list(argv)
            result.changes = scratch.collect_changes(overlay)
            result.isolation = self.describe(limits)
            return result

    def interpreter(self, overlay: Overlay, *, timeout: float) -> PersistentInterpreter:
        """The run's long-lived Python process (started, with the overlay synced in, on first use)."""
        from lsp_agent.sandbox.interpreter import InterpreterError, PersistentInterpreter

        with self._lock:
            if self._interpreter is None or not self._interpreter.alive:
                if self._interpreter is not None:
                    self._interpreter.close()
                self.scratch.sync_in(overlay)
                try:
                    self._interpreter = PersistentInterpreter(self, timeout=timeout)
                except InterpreterError as exc:
                    if self.scratch.mode != "overlay" or MOUNT_FAILED not in str(exc):
                        raise
                    self._overlay_failed = True
                    self._scratch.close()  # type: ignore[union-attr]
                    self._scratch = None
                    self.scratch.sync_in(overlay)
                    self._interpreter = PersistentInterpreter(self, timeout=timeout)
            return self._interpreter

    def close_interpreter(self) -> None:
        """Stop the persistent interpreter if one runs."""
        with self._lock:
            if self._interpreter is not None:
                self._interpreter.close()
                self._interpreter = None

    def close(self) -> None:
        """Stop every child and remove the scratch copy."""
        with self._lock:
            self.close_interpreter()
            if self._scratch is not None:
                self._scratch.close()
                self._scratch = None
        _LIVE.discard(self)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@atexit.register
def _close_all() -> None:
    """Remove scratch copies left by runs that were never closed."""
    for sandbox in list(_LIVE):
        try:
            sandbox.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
