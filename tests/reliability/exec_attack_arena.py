"""The arena of the exec path-attack suite: a workspace with planted links, outside directories, and the checks
that nothing escaped (the real workspace and every outside place byte-for-byte as before)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

SECRET = "OUTSIDE-SECRET-7f3a9c"

# Python for run_python and the CodeAct interpreter: try to write `data` at `path` (mode "a" + "" for files that
# exist on the host, so even an escape would change no byte); print WROTE or REFUSED.
ATTEMPT = """
import os
def attempt(path, data, mode="w"):
    try:
        parent = os.path.dirname(path)
        if parent and mode == "w":
            os.makedirs(parent, exist_ok=True)
    except (OSError, ValueError, RecursionError):
        pass
    try:
        with open(path, mode) as f:
            f.write(data)
        print("WROTE")
    except (OSError, ValueError) as exc:
        print("REFUSED", type(exc).__name__, getattr(exc, "strerror", None) or exc)
"""

# The same for run_command, through sh: $1 path, $2 data, $3 mode (w or a).
SH_ATTEMPT = (
    'if [ "$3" = w ]; then mkdir -p "$(dirname "$1")" 2>/dev/null; printf %s "$2" > "$1"; '
    'else printf %s "$2" >> "$1"; fi 2>/dev/null && echo WROTE || echo REFUSED'
)


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str | int]]:
    """Every entry under root (not following links): files with bytes and mode, links with targets, dirs."""
    out: dict[str, tuple[str, bytes | str | int]] = {}
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(directory, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", path.stat().st_mode)
            elif path.is_file():
                out[rel] = ("file", path.read_bytes() + oct(path.stat().st_mode).encode())
            else:
                out[rel] = ("other", path.lstat().st_mode)
    return out


@dataclass
class Arena:
    """A workspace (under /tmp), an outside dir under /tmp (hidden inside) and one on the root fs (read-only)."""

    ws: Path
    out: Path
    far: Path
    home: Path
    case: str
    before: dict[str, dict] = field(default_factory=dict)
    host_paths: list[Path] = field(default_factory=list)

    def values(self, **extra: str) -> dict[str, str]:
        """Placeholders for the case templates."""
        return {
            "ws": str(self.ws),
            "wsname": self.ws.name,
            "out": str(self.out),
            "far": str(self.far),
            "home": str(self.home),
            "id": self.case,
            "hostpid": str(os.getpid()),
            **extra,
        }

    def context(self, **settings: object) -> ToolContext:
        """A tool context over the workspace with a fresh overlay."""
        return ToolContext(
            root=self.ws, overlay=Overlay(self.ws), settings=Settings(exec_timeout=20, **settings)
        )

    def watch(self, *paths: str) -> None:
        """Record the host paths an attack aims at (outside the arena) to check they did not appear or change."""
        for text in paths:
            if "\0" in text or not text.startswith("/"):
                continue
            path = Path(os.path.normpath(text))
            if any(path.is_relative_to(p) for p in (self.ws, self.out, self.far)) or path.parts[1:2] == (
                "proc",
            ):
                continue
            self.host_paths.append(path)
        self.before = {"ws": snapshot(self.ws), "out": snapshot(self.out), "far": snapshot(self.far)}
        self.before["host"] = {str(p): _state(p) for p in self.host_paths}

    def escapes(self) -> list[str]:
        """What changed outside the proposal: the real workspace, the outside dirs, the watched host paths."""
        found = []
        for key, root in (("ws", self.ws), ("out", self.out), ("far", self.far)):
            now = snapshot(root)
            if now != self.before[key]:
                changed = sorted(set(now.items()) ^ set(self.before[key].items()))
                found.append(f"{root} changed: {changed[:3]}")
        for path in self.host_paths:
            if _state(path) != self.before["host"][str(path)]:
                found.append(f"{path} changed on the host")
        return found

    def cleanup(self) -> None:
        """Remove what a (failed) escape left on the host, and the outside dir."""
        for path in self.host_paths:
            if self.before.get("host", {}).get(str(path)) is None and (path.exists() or path.is_symlink()):
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        shutil.rmtree(self.far, ignore_errors=True)


def _state(path: Path) -> tuple[str, bytes] | None:
    """None when missing, else the kind and (for files) the bytes."""
    try:
        if path.is_symlink():
            return ("link", os.readlink(path).encode())
        if path.is_dir():
            return ("dir", b"")
        if path.is_file():
            return ("file", path.read_bytes())
        return ("other", b"") if path.exists() else None
    except OSError:
        return ("unreadable", b"")


def build_arena(tmp_path: Path, case: str) -> Arena:
    """The workspace with links planted on the host: inside, to outside files, chains, a hard link, dir links."""
    ws, out = tmp_path / "ws", tmp_path / "outside"
    far = Path(tempfile.mkdtemp(prefix="lsp-agent-far-", dir="/var/tmp"))
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "notes.txt").write_text("keep me\n")
    out.mkdir()
    (out / "secret.txt").write_text(SECRET + "\n")
    (far / "target.txt").write_text(SECRET + "\n")
    (far / "hard-target.txt").write_text("hard\n")
    (far / "sub").mkdir()
    os.symlink(ws, far / "ws-link")
    os.symlink("notes.txt", ws / "link-inside.txt")
    os.symlink(far / "target.txt", ws / "link-far.txt")
    os.symlink(out / "secret.txt", ws / "link-out.txt")
    os.symlink(far, ws / "linkdir")
    os.symlink("chain2", ws / "chain1")
    os.symlink("chain3", ws / "chain2")
    os.symlink(far / "target.txt", ws / "chain3")
    os.symlink("../" * 12, ws / "up")
    os.symlink("/proc/self/root", ws / "procroot")
    os.link(far / "hard-target.txt", ws / "hardlink.txt")
    os.mkfifo(ws / "fifo")
    home = Path(os.path.expanduser("~")).resolve()
    return Arena(ws, out, far, home, case)
