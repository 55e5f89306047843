"""One run's sandbox: the scratch copy, the isolation wrapper, the persistent interpreter, and their cleanup."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.sandbox.docker_backend import docker_requested, docker_status, run_in_docker
from lsp_agent.sandbox.environment import scrubbed_environment
from lsp_agent.sandbox.isolation import (
    MOUNT_FAILED,
    SETUP_FAILED,
    Isolation,
    SandboxUnavailable,
    bwrap_prefix,
    current_isolation,
    overlay_mount_prefix,
    overlay_safe_path,
    python_paths,
    refusal_message,
    unshare_prefix,
    user_home,
)
from lsp_agent.sandbox.isolation_report import describe_isolation
from lsp_agent.sandbox.limits import ResourceLimits, limits_for
from lsp_agent.sandbox.namespace import NamespacePlan, overlay_options, plan_namespace
from lsp_agent.sandbox.python_env import PythonChoice, choose_python
from lsp_agent.sandbox.runner import ExecResult, run_process
from lsp_agent.sandbox.scratch import ScratchWorkspace, find_files
from lsp_agent.workspace.overlay import Overlay

if TYPE_CHECKING:
    from lsp_agent.sandbox.interpreter import PersistentInterpreter

log = logging.getLogger(__name__)
_LIVE: weakref.WeakSet[Sandbox] = weakref.WeakSet()


@dataclass
class Launch:
    """How to start one sandboxed command: the full argv, the directory to start it in, its environment."""

    argv: list[str]
    cwd: str
    env: dict[str, str]


class Sandbox:
    """Executes code against a view of `root` showing the run's overlay; never writes to `root`.

    Refuses to run code (SandboxUnavailable) when no isolation mechanism works, unless `allow_unisolated`.
    `hide(rel)` names the workspace's secret files: the namespace sandbox shows them as empty, read-only files.
    """

    def __init__(
        self,
        root: Path,
        *,
        exclude: Sequence[str] = (),
        isolation: Isolation | None = None,
        memory_mib: int = 4096,
        scratch_parent: Path | None = None,
        python: str | None = None,
        allow_unisolated: bool = False,
        hide: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.python_setting = python
        self.exclude = list(exclude)
        self.isolation = isolation or current_isolation()
        self.allow_unisolated = allow_unisolated
        self.hide = hide
        self._secret_files: list[str] | None = None
        self.memory_mib = memory_mib
        self._scratch_parent = scratch_parent
        self._scratch: ScratchWorkspace | None = None
        self._interpreter: PersistentInterpreter | None = None
        self._overlay_failed = False  # the workspace's filesystem refused to be an overlay layer
        self._plan: NamespacePlan | None = None  # the namespace mounts of the last start
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
        """The interpreter for Python code and tests on this machine: the python setting, the workspace's venv,
        or the server's."""
        return choose_python(self.root, self.python_setting)

    def require_isolation(self) -> None:
        """Raise SandboxUnavailable (saying what to install) unless code can run isolated here or is allowed not to."""
        if not self.isolation.isolated and not self.allow_unisolated:
            raise SandboxUnavailable(refusal_message(self.isolation))

    def describe(self, limits: ResourceLimits, *, container: bool = False) -> list[str]:
        """The isolation in force for code that just ran (in a Docker container only when `container`)."""
        return describe_isolation(self, limits, container=container)

    def prepare(self, argv: Sequence[str], cwd_rel: str = ".") -> Launch:
        """The full argv (the isolation mechanism's prefix), start directory and environment for a local start."""
        scratch = self.scratch
        mechanism = self.isolation.mechanism
        if mechanism == "namespace":
            plan = self._namespace_plan(cwd_rel)
            self._plan = plan
            env = self._environment(plan.home, "/tmp", self.root)
            return Launch(plan.argv(argv), str(scratch.base), env)
        prefix: list[str] = []
        view = scratch.workspace
        cwd = (view / cwd_rel).resolve()
        if scratch.mode == "overlay":
            prefix += unshare_prefix(mount=True, net=not self.isolation.bwrap)
            prefix += overlay_mount_prefix(
                [scratch.staging, self.root], scratch.upper, scratch.work, view, scratch.deletions, cwd
            )
        elif mechanism == "none" and self.isolation.unshare_net:
            prefix += unshare_prefix(mount=False, net=True)
        if mechanism == "bwrap":  # the copy also shows at the workspace's own path
            expose = self.python().needed_paths()
            keep = [self.root / name for name in scratch.left_out]
            prefix += bwrap_prefix(
                scratch.base, self.root / cwd_rel, expose=expose, view=(view, self.root), keep=keep
            )
            env = self._environment(str(scratch.home), str(scratch.tmp), self.root)
        else:
            env = self._environment(str(scratch.home), str(scratch.tmp), view)
        start = str(scratch.base) if scratch.mode == "overlay" or mechanism == "bwrap" else str(cwd)
        return Launch(prefix + list(argv), start, env)

    def _namespace_plan(self, cwd_rel: str) -> NamespacePlan:
        """The namespace sandbox's mounts: the view over the workspace's own path, private /tmp and home."""
        scratch = self.scratch
        if scratch.mode == "overlay":
            lower = [scratch.staging, self.root]
            view = {"kind": "overlay", "options": overlay_options(lower, scratch.upper, scratch.work)}
            deletions = scratch.deletions.read_text(encoding="utf-8").splitlines()
            keep = []
        else:
            view, deletions = {"kind": "bind", "source": str(scratch.workspace)}, []
            keep = [self.root / name for name in scratch.left_out]
        newroot = scratch.base / "root"
        newroot.mkdir(exist_ok=True)
        empty = scratch.base / "hidden-secret"
        if not empty.exists():
            empty.touch(mode=0o444)
        view_dir = self.root if scratch.mode == "overlay" else scratch.workspace
        hidden = [self.root / rel for rel in self.secret_files() if (view_dir / rel).is_file()]
        return plan_namespace(
            self.root, view=view, scratch_tmp=scratch.tmp, scratch_home=scratch.home, newroot=newroot,
            cwd=self.root / cwd_rel, home=user_home(), expose=python_paths(self.python().needed_paths()),
            deletions=deletions, keep=keep, hide=hidden, empty=empty,
        )  # fmt: skip

    def secret_files(self) -> list[str]:
        """The workspace's regular files that `hide` names (found once per sandbox)."""
        if self._secret_files is None:
            self._secret_files = find_files(self.root, self.hide) if self.hide is not None else []
        return self._secret_files

    def _environment(self, home: str, tmpdir: str, view: Path) -> dict[str, str]:
        """The scrubbed environment of every child; `view` is where the code sees the workspace."""
        env = scrubbed_environment(os.environ, home=home, tmpdir=tmpdir)
        venv = self.python().venv
        if venv is not None:  # as if activated: its bin/ first on PATH, so `python` and `pytest` are its own
            env["VIRTUAL_ENV"] = str(venv)
            env["PATH"] = os.pathsep.join(filter(None, [str(venv / "bin"), env.get("PATH", "")]))
            env.pop("PYTHONHOME", None)
        path = self._python_path(env.get("PYTHONPATH", ""), view)
        if path:
            env["PYTHONPATH"] = path
        return env

    def _python_path(self, inherited: str, view: Path) -> str:
        """PYTHONPATH with entries inside the workspace moved to the view, plus its src/ when present.

        So imports load the proposed code even for a src-layout project installed in editable mode.
        """
        entries: list[str] = []
        for entry in filter(None, inherited.split(os.pathsep)):
            real = Path(entry).resolve()
            if real.is_relative_to(self.root):
                entry = str(view / real.relative_to(self.root))
            entries.append(entry)
        src = str(view / "src")
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
        on_output: Callable[[str], None] | None = None,
    ) -> ExecResult:
        """Run argv in the view showing `overlay`; the files it changes become overlay writes.

        `on_output` gets the output as it comes (not from a Docker container: its output comes at the end)."""
        limits = self.limits(timeout)
        with self._lock:
            if not self.use_docker:
                self.require_isolation()
            self.close_interpreter()  # one mount of the copy at a time
            scratch = self.scratch
            scratch.sync_in(overlay)
            result = self._launch(argv, scratch, limits, stdin, cwd_rel, cancel, on_output)
            if scratch.mode == "overlay" and result.exit_code == 125 and MOUNT_FAILED in result.stderr:
                log.warning(
                    "overlay mount of %s failed (%s); using a copied scratch workspace",
                    self.root,
                    result.stderr,
                )
                self._overlay_failed = True
                scratch.close()
                self._scratch = None
                return self.run(
                    argv,
                    overlay,
                    timeout=timeout,
                    stdin=stdin,
                    cwd_rel=cwd_rel,
                    cancel=cancel,
                    on_output=on_output,
                )
            if result.exit_code == 125 and SETUP_FAILED in result.stderr:
                result.error = "the sandbox could not be set up, so nothing ran: " + result.stderr.strip()
            result.argv = list(argv)
            result.changes = scratch.collect_changes(overlay, self.hide)
            result.isolation = self.describe(limits, container=result.container)
            return result

    def _launch(
        self,
        argv: Sequence[str],
        scratch: ScratchWorkspace,
        limits: ResourceLimits,
        stdin: str | None,
        cwd_rel: str,
        cancel: threading.Event | None,
        on_output: Callable[[str], None] | None,
    ) -> ExecResult:
        """Run argv in a container or in the local sandbox and wait for its end."""
        if self.use_docker:
            env = self._environment(str(scratch.home), str(scratch.tmp), scratch.workspace)
            return run_in_docker(
                argv, scratch.workspace, limits=limits, env=env, stdin=stdin, cwd_rel=cwd_rel
            )
        launch = self.prepare(argv, cwd_rel)
        return run_process(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            limits=limits,
            stdin=stdin,
            cancel=cancel,
            on_output=on_output,
        )

    def interpreter(self, overlay: Overlay, *, timeout: float) -> PersistentInterpreter:
        """The run's long-lived Python process in the local sandbox (started, with the overlay synced in, on
        first use); never in a container, whatever the backend."""
        from lsp_agent.sandbox.interpreter import InterpreterError, PersistentInterpreter

        with self._lock:
            self.require_isolation()
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
