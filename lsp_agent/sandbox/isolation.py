"""What isolation this machine gives (bubblewrap, unshare, overlayfs), probed once, and the wrapper argv."""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DISABLE_ENV = "LSP_AGENT_SANDBOX_DISABLE"  # comma list of: overlay, bwrap, unshare (to force a fallback)
PROBE_TIMEOUT = 10.0
MOUNT_FAILED = "lsp-agent-sandbox: overlay mount failed"

# Mounts the copy-on-write view of the workspace in the child's private mount namespace, applies deletions,
# then execs the rest of the argv: sh -c SCRIPT sh LOWER UPPER WORK MERGED DELETIONS CWD -- ARGV...
OVERLAY_MOUNT_SCRIPT = r"""set -e
lower=$1; upper=$2; work=$3; merged=$4; deletions=$5; cwd=$6; shift 7
mount -t overlay lsp-agent-sandbox -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$merged" || {
  echo "lsp-agent-sandbox: overlay mount failed" >&2; exit 125; }
if [ -s "$deletions" ]; then
  while IFS= read -r p; do rm -f -- "$merged/$p"; done < "$deletions"
fi
cd "$cwd"
exec "$@"
"""


@dataclass(frozen=True)
class Isolation:
    """The mechanisms that work here: copy-on-write overlay mount, bubblewrap, network namespace via unshare."""

    overlay: bool
    bwrap: bool
    unshare_net: bool
    notes: tuple[str, ...] = ()

    @property
    def network_isolated(self) -> bool:
        """True when the child gets an empty network namespace."""
        return self.bwrap or self.unshare_net or self.overlay

    def network_line(self) -> str:
        """How the network is (or is not) cut off, stated plainly."""
        if self.bwrap:
            return "network: cut off (bwrap)"
        if self.unshare_net or self.overlay:
            return "network: cut off (unshare)"
        return "network: NOT isolated: bwrap/unshare unavailable"

    def filesystem_line(self) -> str:
        """Whether writes outside the scratch copy are refused."""
        if self.bwrap:
            return "filesystem: read-only outside the scratch copy, your home directory hidden, /tmp private (bwrap)"
        return "filesystem: writes outside the scratch copy are NOT blocked: bwrap unavailable"


def _disabled() -> set[str]:
    """Mechanisms switched off through LSP_AGENT_SANDBOX_DISABLE."""
    return {p.strip().lower() for p in os.environ.get(DISABLE_ENV, "").split(",") if p.strip()}


def current_isolation() -> Isolation:
    """The isolation available now (probed once per process and per LSP_AGENT_SANDBOX_DISABLE value)."""
    return _probe(frozenset(_disabled()))


def is_root() -> bool:
    """True when running as root (namespaces without a user namespace, capabilities to drop)."""
    return os.geteuid() == 0


def bwrap_prefix(bind_dir: Path, cwd: Path, *, expose: Sequence[Path] = ()) -> list[str]:
    """bubblewrap: read-only root, home hidden (but `expose`), private /tmp, the sandbox dir writable, no network,
    own pid/ipc/uts."""
    argv = [
        "bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
    ]  # fmt: skip
    home, exposed = home_exposures(expose)
    if home is not None:
        argv += ["--tmpfs", str(home)]
        for path in exposed:
            argv += ["--ro-bind", str(path), str(path)]
    argv += [
        "--tmpfs", "/tmp",
        "--bind", str(bind_dir), str(bind_dir),
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--die-with-parent",
    ]  # fmt: skip
    if is_root():
        argv += ["--cap-drop", "ALL"]
    return argv + ["--chdir", str(cwd), "--"]


def home_exposures(extra: Sequence[Path] = ()) -> tuple[Path | None, list[Path]]:
    """The user's home (hidden from the code: keys, tokens, shell history) and what in it Python needs to run.

    Kept visible: this interpreter's prefixes, the user site-packages, the parent of every PATH entry inside
    home (so ~/.local/bin or ~/.pyenv/shims keep working) and `extra` (the workspace's venv). Returns (None, [])
    when home cannot be hidden.
    """
    try:
        home = Path(os.path.expanduser("~")).resolve()
    except (OSError, RuntimeError):
        return None, []
    if home == Path("/") or not home.is_dir() or home == Path("/tmp"):
        return None, []
    wanted = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(site.getusersitepackages()),
        *extra,
    ]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry:
            wanted.append(Path(entry).parent)
    inside: list[Path] = []
    for path in wanted:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real != home and real.is_relative_to(home) and real.exists():
            inside.append(real)
    inside.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in inside:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return home, kept


def unshare_prefix(*, mount: bool, net: bool) -> list[str]:
    """util-linux unshare: private mount and/or network namespace (a user namespace when not root)."""
    argv = ["unshare"]
    if mount:
        argv += ["--mount", "--propagation", "private"]
    if net:
        argv.append("--net")
    if not is_root():
        argv.append("--map-root-user")
    return argv + ["--"]


def overlay_mount_prefix(
    lower: list[Path], upper: Path, work: Path, merged: Path, deletions: Path, cwd: Path
) -> list[str]:
    """sh that mounts the overlay (lower dirs leftmost on top), applies deletions, cds and execs the rest."""
    return [
        "sh", "-c", OVERLAY_MOUNT_SCRIPT, "sh",
        ":".join(str(p) for p in lower), str(upper), str(work), str(merged), str(deletions), str(cwd), "--",
    ]  # fmt: skip


def overlay_safe_path(path: Path) -> bool:
    """overlayfs mount options cannot hold these characters in a directory path."""
    return not any(c in str(path) for c in ",:\\\n")


def _run_quiet(argv: list[str]) -> bool:
    """True when argv exits 0 within the probe timeout."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=PROBE_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=8)
def _probe(disabled: frozenset[str]) -> Isolation:
    """Try each mechanism on a tiny directory and keep those that really work."""
    notes: list[str] = []
    have_bwrap = "bwrap" not in disabled and shutil.which("bwrap") is not None
    have_unshare = "unshare" not in disabled and shutil.which("unshare") is not None
    with tempfile.TemporaryDirectory(prefix="lsp-agent-probe-") as tmp:
        base = Path(tmp)
        bwrap_ok = have_bwrap and _run_quiet([*bwrap_prefix(base, base), "true"])
        if have_bwrap and not bwrap_ok:
            notes.append("bwrap is installed but cannot create namespaces here")
        net_ok = have_unshare and _run_quiet([*unshare_prefix(mount=False, net=True), "true"])
        overlay_ok = False
        if have_unshare and "overlay" not in disabled and overlay_safe_path(base):
            overlay_ok = _probe_overlay(base, with_bwrap=bwrap_ok)
            if not overlay_ok and bwrap_ok:
                # The overlay may work on its own but not nested with bwrap; bwrap's isolation wins then.
                notes.append("overlayfs does not combine with bwrap here; using a plain scratch copy")
    return Isolation(overlay=overlay_ok, bwrap=bwrap_ok, unshare_net=net_ok, notes=tuple(notes))


def _probe_overlay(base: Path, *, with_bwrap: bool) -> bool:
    """Mount a real overlay (with bwrap inside when available) and check the write landed in the upper dir."""
    dirs = {name: base / name for name in ("lower", "upper", "work", "merged")}
    for d in dirs.values():
        d.mkdir()
    (dirs["lower"] / "kept.txt").write_text("lower\n")
    deletions = base / "deletions"
    deletions.write_text("kept.txt\n")
    inner = ["sh", "-c", "echo probe > written.txt && test ! -e kept.txt"]
    argv = [
        *unshare_prefix(mount=True, net=True),
        *overlay_mount_prefix(
            [dirs["lower"]], dirs["upper"], dirs["work"], dirs["merged"], deletions, dirs["merged"]
        ),
    ]
    if with_bwrap:
        argv += bwrap_prefix(base, dirs["merged"])
    ok = _run_quiet(argv + inner)
    return ok and (dirs["upper"] / "written.txt").is_file() and (dirs["lower"] / "kept.txt").is_file()


def sandbox_status() -> dict[str, object]:
    """JSON-ready summary of the isolation available here (for the server's status command)."""
    here = current_isolation()
    return {
        "scratchCopy": "overlayfs" if here.overlay else "copy",
        "bwrap": here.bwrap,
        "network": here.network_line(),
        "filesystem": here.filesystem_line(),
        "notes": list(here.notes),
    }
