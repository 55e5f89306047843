"""The namespace sandbox's host side: what to mount where (for namespace_launcher.py), its argv, and its probe.

Inside: the workspace's own absolute path shows the run's view (overlayfs over the real files, or a bind of a
copy), /tmp and the home directory are private to the run (home keeps only what Python needs, read-only), /dev
holds null/zero/full/random/urandom/tty, /run is empty, /proc is the run's own, everything else is the host's
tree read-only; own network (loopback only), PID, IPC and UTS namespaces; no capabilities, no_new_privs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

LAUNCHER = Path(__file__).with_name("namespace_launcher.py")
TMP = Path("/tmp")
RUN = Path("/run")


@dataclass
class NamespacePlan:
    """The mounts of one sandboxed start, and the environment paths the code should use inside."""

    workspace: Path
    cwd: Path
    newroot: Path
    mounts: list[dict[str, str]] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)
    deletions: list[str] = field(default_factory=list)
    home: str = "/tmp"  # HOME inside
    hidden_home: Path | None = None  # the user's home directory when it is replaced by a private one
    hidden_files: list[Path] = field(default_factory=list)  # files the view shows as empty and read-only

    def options(self) -> list[str]:
        """The launcher's OPTIONS (see namespace_launcher.py)."""
        args = ["--newroot", str(self.newroot), "--workspace", str(self.workspace), "--cwd", str(self.cwd)]
        args += ["--userns", "1" if os.geteuid() != 0 else "0"]
        for step in self.mounts:
            args += ["--mount", step["kind"], step.get("source", ""), step["target"], step.get("options", "")]
        for path in self.writable:
            args += ["--writable", path]
        for rel in self.deletions:
            args += ["--delete", rel]
        return args

    def argv(self, command: Sequence[str]) -> list[str]:
        """The full argv: this interpreter running the launcher, then the command."""
        return [sys.executable, "-I", "-S", "-B", str(LAUNCHER), *self.options(), "--", *command]


def plan_namespace(
    workspace: Path,
    *,
    view: dict[str, str],
    scratch_tmp: Path,
    scratch_home: Path,
    newroot: Path,
    cwd: Path,
    home: Path | None,
    expose: Sequence[Path] = (),
    deletions: Sequence[str] = (),
    keep: Sequence[Path] = (),
    hide: Sequence[Path] = (),
    empty: Path | None = None,
) -> NamespacePlan:
    """Mounts for a run over `workspace` whose view is `view` (an overlay or bind step without its target).

    `home` is the user's home directory to hide (None: keep it, read-only); `expose` lists paths under /tmp or
    home that the interpreter needs (bound read-only at the same place).
    """
    workspace = Path(workspace)
    plan = NamespacePlan(workspace, cwd, newroot, deletions=list(deletions))
    plan.mounts.append({**view, "target": str(workspace)})
    plan.writable.append(str(workspace))
    plan.mounts += [{"kind": "bind", "source": str(p), "target": str(p)} for p in keep]
    if empty is not None:
        plan.mounts += [{"kind": "bind", "source": str(empty), "target": str(p)} for p in hide]
        plan.hidden_files = list(hide)
    hidden: list[Path] = []
    if not TMP.is_relative_to(workspace):
        plan.mounts.append({"kind": "bind", "source": str(scratch_tmp), "target": str(TMP)})
        plan.writable.append(str(TMP))
        hidden.append(TMP)
    if home is not None and not home.is_relative_to(workspace) and home != TMP:
        plan.mounts.append({"kind": "bind", "source": str(scratch_home), "target": str(home)})
        plan.writable.append(str(home))
        plan.home, plan.hidden_home = str(home), home
        hidden.append(home)
    for path in _kept(expose, hidden, workspace):
        plan.mounts.append({"kind": "bind", "source": str(path), "target": str(path)})
    if RUN.is_dir() and not workspace.is_relative_to(RUN) and not RUN.is_relative_to(workspace):
        plan.mounts.append({"kind": "tmpfs", "target": str(RUN), "options": "64k"})
    plan.writable.append("/dev/shm")
    return plan


def _kept(expose: Sequence[Path], hidden: Sequence[Path], workspace: Path) -> list[Path]:
    """The exposed paths that a private directory would hide (outermost only; none inside the workspace)."""
    inside = sorted(
        {
            p
            for p in expose
            if any(p.is_relative_to(h) and p != h for h in hidden) and not p.is_relative_to(workspace)
        },
        key=lambda p: len(p.parts),
    )
    kept: list[Path] = []
    for path in inside:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


def probe_namespace(base: Path, *, overlay: bool, timeout: float) -> bool:
    """Start `sh` in the namespace sandbox over a tiny workspace under `base`: True when the view took the
    write, the deleted file was gone inside and the real files were not touched."""
    dirs = {n: base / n for n in ("ws", "upper", "work", "staging", "copy", "tmp", "home", "root")}
    for d in dirs.values():
        d.mkdir()
    (dirs["ws"] / "kept.txt").write_text("lower\n")
    ws = dirs["ws"]
    if overlay:
        view = {
            "kind": "overlay",
            "options": overlay_options([dirs["staging"], ws], dirs["upper"], dirs["work"]),
        }
        took = dirs["upper"]
    else:
        view = {"kind": "bind", "source": str(dirs["copy"])}
        took = dirs["copy"]
        (dirs["copy"] / "kept.txt").write_text("lower\n")
    plan = plan_namespace(
        ws, view=view, scratch_tmp=dirs["tmp"], scratch_home=dirs["home"], newroot=dirs["root"], cwd=ws,
        home=None, deletions=["kept.txt"],
    )  # fmt: skip
    outside = Path(f"/lsp-agent-probe-{os.getpid()}")  # must stay unwritable: the root is read-only inside
    script = f"echo probe > {ws}/written.txt && test ! -e kept.txt && ! touch {outside} 2>/dev/null"
    try:
        done = subprocess.run(
            plan.argv(["sh", "-c", script]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    if outside.exists():
        outside.unlink()
        return False
    return (
        done.returncode == 0
        and (took / "written.txt").is_file()
        and not (ws / "written.txt").exists()
        and (ws / "kept.txt").is_file()
    )


def overlay_options(lower: Sequence[Path], upper: Path, work: Path) -> str:
    """overlayfs mount options (lower dirs leftmost on top)."""
    return f"lowerdir={':'.join(str(p) for p in lower)},upperdir={upper},workdir={work}"
