"""The scratch copy of a workspace the sandboxed code runs in: copy-on-write overlay or a reflinked/plain copy."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.sandbox import safe_fs
from lsp_agent.workspace.overlay import Overlay
from lsp_agent.workspace.walk import is_ignored, walk_workspace

FICLONE = 0x40049409  # linux/fs.h: share the source file's extents (copy-on-write) on btrfs, xfs, ...

# Build and tool caches the code leaves behind: never proposed as changes.
JUNK_DIRS = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".git",
        ".cache",
    }
)
JUNK_SUFFIXES = (".pyc", ".pyo")
JUNK_NAMES = frozenset({".coverage"})
MAX_TEXT_BYTES = 2_000_000


@dataclass
class ChangeReport:
    """What the code changed in the scratch copy, and what of it became overlay writes."""

    written: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why"

    def is_empty(self) -> bool:
        """True when nothing was changed or skipped."""
        return not (self.written or self.created or self.deleted or self.skipped)

    def describe(self) -> str:
        """Lines for the model: which files joined the proposal and which were left out."""
        lines = []
        if self.created or self.written or self.deleted:
            parts = [f"{p} (created)" for p in self.created] + [f"{p} (modified)" for p in self.written]
            parts += [f"{p} (deleted)" for p in self.deleted]
            lines.append("files changed by the code (added to the proposal): " + ", ".join(parts))
        if self.skipped:
            lines.append("file changes NOT added to the proposal: " + "; ".join(self.skipped))
        return "\n".join(lines)


def is_junk(rel: str) -> bool:
    """True for caches and bytecode the code leaves behind."""
    parts = rel.split("/")
    return (
        any(p in JUNK_DIRS for p in parts[:-1])
        or parts[-1] in JUNK_DIRS
        or parts[-1] in JUNK_NAMES
        or parts[-1].endswith(JUNK_SUFFIXES)
    )


def _decode_text(data: bytes) -> str | None:
    """UTF-8 text without NUL bytes, else None."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _top_level_venvs(root: Path) -> set[str]:
    """Names of the workspace's top-level directories that are virtual environments (hold a pyvenv.cfg)."""
    try:
        return {e.name for e in os.scandir(root) if e.is_dir() and os.path.isfile(Path(e.path, "pyvenv.cfg"))}
    except OSError:
        return set()


def find_files(root: Path, wanted: Callable[[str], bool], limit: int = 200_000) -> list[str]:
    """Relative paths of the regular files under root that `wanted` names (gitignored ones too; caches, virtual
    environments and node_modules skipped; at most `limit` entries looked at)."""
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        prefix = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = [
            d for d in dirs
            if d not in JUNK_DIRS and d != "node_modules" and not os.path.isfile(os.path.join(directory, d, "pyvenv.cfg"))
        ]  # fmt: skip
        seen += len(dirs) + len(files)
        for name in files:
            rel = prefix + name
            try:
                if wanted(rel) and stat.S_ISREG(os.lstat(os.path.join(directory, name)).st_mode):
                    found.append(rel)
            except OSError:
                continue
        if seen > limit:
            break
    return sorted(found)


def clone_or_copy(src: Path, dst: Path, *, try_clone: bool) -> bool:
    """Copy one file, sharing extents (reflink) when try_clone and the filesystem allows; True when cloned."""
    if try_clone:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            try:
                fcntl.ioctl(fout.fileno(), FICLONE, fin.fileno())
                shutil.copymode(src, dst)
                return True
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EXDEV, errno.EINVAL, errno.ENOTTY, errno.EBADF):
                    raise
    shutil.copyfile(src, dst)  # contents and mode only: timestamps and xattrs do not matter in a scratch copy
    shutil.copymode(src, dst)
    return False


class ScratchWorkspace:
    """A private, disposable copy of the workspace plus HOME and TMPDIR for the sandboxed code.

    mode "overlay": the workspace is the read-only lower layer of an overlayfs mounted in the child's own mount
    namespace (nothing is copied up front; files are copied up only when the code writes them, into `upper`).
    mode "copy": the files the workspace walk yields are cloned (reflink) or copied into `workspace`.
    Either way the user's files are never opened for writing.
    """

    def __init__(
        self, root: Path, *, mode: str, exclude: Sequence[str] = (), parent: Path | None = None
    ) -> None:
        if mode not in ("overlay", "copy"):
            raise ValueError(f"unknown scratch mode {mode!r}")
        self.root = Path(root).resolve()
        self.mode = mode
        self.exclude = list(exclude)
        self.base = Path(tempfile.mkdtemp(prefix="lsp-agent-sandbox-", dir=parent)).resolve()
        self.workspace = self.base / "workspace"
        self.home = self.base / "home"
        self.tmp = self.base / "tmp"
        self.upper = self.base / "upper"
        self.work = self.base / "overlay-work"
        self.staging = self.base / "staging"
        self.deletions = self.base / "deletions"
        self.copy_method = "overlayfs copy-on-write" if mode == "overlay" else "copy"
        self._snapshot: dict[str, tuple[int, int, int]] = {}
        self._injected: set[str] = set()
        self._too_deep: list[str] = []
        self.left_out: list[str] = []  # top-level virtual environments a copy leaves out (they run in place)
        self.closed = False
        for d in (self.workspace, self.home, self.tmp):
            d.mkdir()
        if mode == "overlay":
            for d in (self.upper, self.work, self.staging):
                d.mkdir()
            self.deletions.write_text("")
        else:
            self._copy_tree()

    # ----- building -----------------------------------------------------------------------------------

    def _copy_tree(self) -> None:
        """Clone (reflink) or copy every workspace file the walk yields; directories are created as needed."""
        try_clone = True
        cloned = copied = 0
        made: set[Path] = set()
        venvs = _top_level_venvs(self.root)
        self.left_out = sorted(venvs)
        for path in walk_workspace(self.root, exclude=self.exclude):
            rel = path.relative_to(self.root)
            if rel.parts[0] in venvs:
                continue  # a virtual environment runs from where it is; copying it would only cost time
            dst = self.workspace / rel
            if dst.parent not in made:
                dst.parent.mkdir(parents=True, exist_ok=True)
                made.add(dst.parent)
            try:
                if clone_or_copy(path, dst, try_clone=try_clone):
                    cloned += 1
                else:
                    copied += 1
                    try_clone = False  # the first refusal means this filesystem cannot share extents
            except OSError:
                continue  # unreadable or vanished file: leave it out of the copy
        self.copy_method = "reflink copy-on-write" if cloned and not copied else "copy"

    # ----- the agent's overlay in, the code's changes out ---------------------------------------------

    def sync_in(self, overlay: Overlay) -> None:
        """Make the scratch copy show what the agent sees: its proposed edits and deletions, and the text it read
        of files that differ from the disk (an editor's unsaved buffers)."""
        changes = self._agent_view(overlay)
        if self.mode == "overlay":
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging.mkdir()
            for rel, text in changes.items():
                self._drop_upper(rel)
                if text is not None:
                    target = self.staging / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(text.encode("utf-8"))
            for rel in self._injected - set(changes):
                self._drop_upper(rel)  # a reverted change: show the disk file again
            deleted = sorted(rel for rel, text in changes.items() if text is None)
            self.deletions.write_text("".join(rel + "\n" for rel in deleted))
        else:
            for rel in self._injected - set(changes):
                self._restore_from_disk(rel)
            for rel, text in changes.items():  # the code may have planted symlinks here: never follow one
                if text is None:
                    safe_fs.unlink(self.workspace, rel)
                else:
                    safe_fs.write_file(self.workspace, rel, text.encode("utf-8"))
            self._snapshot = self._scan_copy()
        self._injected = set(changes)

    def _agent_view(self, overlay: Overlay) -> dict[str, str | None]:
        """The overlay's changes plus every file the agent read whose text is not what the disk holds now."""
        changes = overlay.overrides()
        for rel, text in overlay.read_texts().items():
            if rel not in changes and not self._disk_holds(rel, text):
                changes[rel] = text
        return changes

    def _disk_holds(self, rel: str, text: str) -> bool:
        """True when the workspace file `rel` holds exactly `text`."""
        path, data = self.root / rel, text.encode("utf-8")
        try:
            return path.stat().st_size == len(data) and path.read_bytes() == data
        except OSError:
            return False

    def collect_changes(self, overlay: Overlay, secret: Callable[[str], bool] | None = None) -> ChangeReport:
        """Turn the files the code created, modified or deleted into overlay writes and deletions.

        Files that `secret` names (.env, keys) are never proposed: the code cannot write the user's secrets.
        """
        report = ChangeReport()
        if self.mode == "overlay":
            touched, removed = self._scan_upper()
        else:
            now = self._scan_copy()
            touched = sorted(rel for rel, sig in now.items() if self._snapshot.get(rel) != sig)
            removed = sorted(rel for rel in self._snapshot if rel not in now)
            self._snapshot = now
        for rel in self._too_deep:
            report.skipped.append(
                f"{rel}/: more than {safe_fs.MAX_DEPTH} directories deep; its files are not proposed"
            )
        if secret is not None:
            for rel in filter(secret, touched + removed):
                report.skipped.append(f"{rel}: a secret file (secretFiles); changes to it are not proposed")
            touched = [rel for rel in touched if not secret(rel)]
            removed = [rel for rel in removed if not secret(rel)]
        for rel in touched:
            if self._ignored(rel):
                continue
            self._take_file(overlay, rel, report)
        for rel in removed:
            if self._ignored(rel):
                continue
            try:
                if overlay.is_file(rel):
                    overlay.delete(rel)
                    report.deleted.append(rel)
            except (OSError, ValueError) as exc:
                report.skipped.append(f"{rel}: {exc}")
        return report

    def _take_file(self, overlay: Overlay, rel: str, report: ChangeReport) -> None:
        """Read one file the code wrote and propose it unless it equals the current view."""
        base = self.upper if self.mode == "overlay" else self.workspace
        try:
            text = _decode_text(safe_fs.read_regular(base, rel, MAX_TEXT_BYTES))
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                report.skipped.append(f"{rel}: {exc.strerror}")
            else:
                report.skipped.append(f"{rel}: unreadable ({exc.strerror})")
            return
        if text is None:
            report.skipped.append(f"{rel}: binary file (only text files can be proposed)")
            return
        try:
            existed = overlay.is_file(rel)
            if existed and overlay.view_text(rel) == text:
                return
            overlay.write_text(rel, text)
        except (OSError, ValueError) as exc:
            report.skipped.append(f"{rel}: {exc}")
            return
        (report.written if existed else report.created).append(rel)

    def _ignored(self, rel: str) -> bool:
        """Caches, bytecode and gitignored paths are not proposed."""
        if is_junk(rel):
            return True
        try:
            return is_ignored(self.root, self.root / rel, self.exclude)
        except (OSError, ValueError):
            return False

    # ----- scanning -------------------------------------------------------------------------------------

    def _scan_copy(self) -> dict[str, tuple[int, int, int]]:
        """rel -> (size, mtime_ns, inode) of every regular file in the copy, caches skipped."""
        found, self._too_deep = safe_fs.scan(self.workspace, JUNK_DIRS.__contains__)
        return {rel: (st.st_size, st.st_mtime_ns, st.st_ino) for rel, st in found if stat.S_ISREG(st.st_mode)}

    def _scan_upper(self) -> tuple[list[str], list[str]]:
        """Files written (regular files) and deleted (whiteouts: 0/0 character devices) in the overlay's upper dir."""
        found, self._too_deep = safe_fs.scan(self.upper, JUNK_DIRS.__contains__)
        written = [rel for rel, st in found if stat.S_ISREG(st.st_mode)]
        removed = [rel for rel, st in found if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0]
        return sorted(written), sorted(removed)

    def _drop_upper(self, rel: str) -> None:
        """Remove a copied-up file or whiteout so the staging layer (or the disk) shows through again."""
        safe_fs.unlink(self.upper, rel)

    def _restore_from_disk(self, rel: str) -> None:
        """Copy mode: put the disk version of a file back after its proposed change was reverted."""
        src = self.root / rel
        if src.is_file():
            safe_fs.write_file(self.workspace, rel, src.read_bytes(), stat.S_IMODE(src.stat().st_mode))
        else:
            safe_fs.unlink(self.workspace, rel)

    # ----- teardown -------------------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the scratch directory (safe to call twice)."""
        if self.closed:
            return
        self.closed = True
        try:
            shutil.rmtree(self.base, ignore_errors=True)
        except (
            RecursionError
        ):  # the code made a tree deeper than Python's recursion limit: rm(1) walks any depth
            subprocess.run(["rm", "-rf", "--one-file-system", "--", str(self.base)], check=False, timeout=600)
