"""What isolation this machine gives (namespace sandbox, bubblewrap, overlayfs), probed once, and the wrapper argv."""

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

from lsp_agent.sandbox.namespace import probe_namespace

DISABLE_ENV = (
    "LSP_AGENT_SANDBOX_DISABLE"  # comma list of: overlay, bwrap, namespace, unshare (forces a fallback)
)
PROBE_TIMEOUT = 10.0
MOUNT_FAILED = "lsp-agent-sandbox: overlay mount failed"
SETUP_FAILED = "lsp-agent-sandbox: setup failed"

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


class SandboxUnavailable(RuntimeError):
    """No isolation mechanism works here and unisolated execution is not allowed; the message says what to do."""


@dataclass(frozen=True)
class Isolation:
    """The mechanisms that work here: the namespace sandbox, bubblewrap, the overlay view, `unshare --net`."""

    overlay: bool
    bwrap: bool
    unshare_net: bool
    notes: tuple[str, ...] = ()
    namespace: bool = False  # namespace_launcher.py: the view over the workspace's path, the rest read-only

    @property
    def mechanism(self) -> str:
        """ "namespace", "bwrap" or "none" (the first that works, in that order)."""
        if self.namespace:
            return "namespace"
        return "bwrap" if self.bwrap else "none"

    @property
    def isolated(self) -> bool:
        """True when code cannot write outside its view of the workspace and its private directories."""
        return self.mechanism != "none"

    @property
    def network_isolated(self) -> bool:
        """True when the child gets an empty network namespace."""
        return self.isolated or self.unshare_net or self.overlay

    def network_line(self) -> str:
        """How the network is (or is not) cut off, stated plainly."""
        if self.namespace:
            return "network: cut off (own network namespace with only loopback)"
        if self.bwrap:
            return "network: cut off (bwrap)"
        if self.unshare_net or self.overlay:
            return "network: cut off (unshare)"
        return "network: NOT isolated: no namespace sandbox, bwrap or unshare works here"

    def filesystem_line(self) -> str:
        """Whether writes outside the workspace view are refused."""
        if self.namespace:
            return (
                "filesystem: everything outside the workspace view, /tmp and the home directory is read-only; "
                "no capabilities, so the code cannot remount it (mount namespace)"
            )
        if self.bwrap:
            return "filesystem: read-only outside the scratch copy, your home directory hidden, /tmp private (bwrap)"
        return (
            "filesystem: NOT isolated: the code can write wherever your user can, your real workspace files "
            "included (unisolated execution is allowed by the allowUnisolatedExec setting)"
        )


def _disabled() -> set[str]:
    """Mechanisms switched off through LSP_AGENT_SANDBOX_DISABLE."""
    return {p.strip().lower() for p in os.environ.get(DISABLE_ENV, "").split(",") if p.strip()}


def current_isolation() -> Isolation:
    """The isolation available now (probed once per process and per LSP_AGENT_SANDBOX_DISABLE value)."""
    return _probe(frozenset(_disabled()))


def is_root() -> bool:
    """True when running as root (namespaces without a user namespace, capabilities to drop)."""
    return os.geteuid() == 0


def bwrap_prefix(
    bind_dir: Path,
    cwd: Path,
    *,
    expose: Sequence[Path] = (),
    view: tuple[Path, Path] | None = None,
    keep: Sequence[Path] = (),
) -> list[str]:
    """bubblewrap: read-only root, home hidden (but `expose`), private /tmp, the sandbox dir writable, no network,
    own pid/ipc/uts; `view` = (scratch copy, workspace path) also shows the copy at the workspace's own path, with
    the real directories `keep` (virtual environments left out of a copy) read-only inside it."""
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
        *(["--bind", str(view[0]), str(view[1])] if view else []),
        *[arg for path in keep for arg in ("--ro-bind", str(path), str(path))],
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--die-with-parent",
    ]  # fmt: skip
    if is_root():
        argv += ["--cap-drop", "ALL"]
    return argv + ["--chdir", str(cwd), "--"]


def home_exposures(extra: Sequence[Path] = ()) -> tuple[Path | None, list[Path]]:
    """The user's home (hidden from the code: keys, tokens, shell history) and what in it Python needs to run.

    Kept visible: the paths of python_paths() inside home (outermost only). Returns (None, []) when home cannot
    be hidden.
    """
    home = user_home()
    if home is None:
        return None, []
    inside = sorted(
        (p for p in python_paths(extra) if p != home and p.is_relative_to(home)), key=lambda p: len(p.parts)
    )
    kept: list[Path] = []
    for path in inside:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return home, kept


def user_home() -> Path | None:
    """The user's home directory when it can be hidden (not /, not /tmp, an existing directory)."""
    try:
        home = Path(os.path.expanduser("~")).resolve()
    except (OSError, RuntimeError):
        return None
    if home in (Path("/"), Path("/tmp")) or not home.is_dir():
        return None
    return home


def python_paths(extra: Sequence[Path] = ()) -> list[Path]:
    """What Python needs to run, resolved: this interpreter's prefixes, the user site-packages, the parent of every
    PATH entry (so ~/.local/bin or ~/.pyenv/shims keep working) and `extra` (the workspace's venv)."""
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
    found: list[Path] = []
    for path in wanted:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real.exists() and real not in found:
            found.append(real)
    return found


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
    try_namespace = not disabled & {"unshare", "namespace"}
    with tempfile.TemporaryDirectory(prefix="lsp-agent-probe-") as tmp:
        base = Path(tmp)
        namespace_ok = overlay_ok = False
        if try_namespace:
            for view in ("overlay", "copy") if "overlay" not in disabled else ("copy",):
                (base / view).mkdir()
                if probe_namespace(base / view, overlay=view == "overlay", timeout=PROBE_TIMEOUT):
                    namespace_ok, overlay_ok = True, view == "overlay"
                    break
            if not namespace_ok:
                notes.append(
                    "the namespace sandbox does not start here (mount/user namespaces refused by the kernel)"
                )
        bwrap_ok = have_bwrap and _run_quiet([*bwrap_prefix(base, base), "true"])
        if have_bwrap and not bwrap_ok:
            notes.append("bwrap is installed but cannot create namespaces here")
        net_ok = have_unshare and _run_quiet([*unshare_prefix(mount=False, net=True), "true"])
        if not namespace_ok and have_unshare and "overlay" not in disabled and overlay_safe_path(base):
            overlay_ok = _probe_overlay(base, with_bwrap=bwrap_ok)
            if not overlay_ok and bwrap_ok:
                # The overlay may work on its own but not nested with bwrap; bwrap's isolation wins then.
                notes.append("overlayfs does not combine with bwrap here; using a plain scratch copy")
    if disabled:
        notes.append("switched off by LSP_AGENT_SANDBOX_DISABLE: " + ", ".join(sorted(disabled)))
    return Isolation(
        overlay=overlay_ok, bwrap=bwrap_ok, unshare_net=net_ok, notes=tuple(notes), namespace=namespace_ok
    )


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
        "mechanism": here.mechanism,
        "isolated": here.isolated,
        "scratchCopy": "overlayfs" if here.overlay else "copy",
        "bwrap": here.bwrap,
        "network": here.network_line(),
        "filesystem": here.filesystem_line(),
        "notes": list(here.notes),
    }


def refusal_message(isolation: Isolation) -> str:
    """Why code will not run here and what to install or enable (no mechanism works, unisolated not allowed)."""
    why = "; ".join(isolation.notes) or "no bubblewrap and no usable namespaces"
    return (
        f"refused: code execution needs isolation and none works on this machine ({why}). Install bubblewrap "
        "(Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`), or allow unprivileged "
        "user namespaces (`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 also "
        "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`), or use a Docker engine "
        "(LSP_AGENT_SANDBOX_BACKEND=docker). To run code WITHOUT isolation anyway (it could change any file your "
        "user can, the real workspace included), set the allowUnisolatedExec setting "
        "(LSP_AGENT_ALLOW_UNISOLATED_EXEC=1)."
    )
