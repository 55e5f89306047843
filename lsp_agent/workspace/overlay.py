"""The run's in-memory view of the workspace: disk text plus the agent's proposed writes and deletions."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from lsp_agent.workspace.paths import (
    PathError,
    check_writable_rel,
    normalize_rel,
    require_regular_file,
    resolve_in_workspace,
    resolve_key,
)
from lsp_agent.workspace.proposal import FileChange, Proposal, read_disk_text, write_disk_text

_MISSING = object()


class NotTextError(ValueError):
    """A file that is binary or not valid UTF-8, which the agent can neither read nor edit."""


class FileTooLargeError(ValueError):
    """A file above the configured size limit."""


class Overlay:
    """Disk + proposed edits. Writes never touch disk; reads and searches in the same run see them.

    Paths are workspace-relative strings; every one is resolved inside the root (PathError otherwise). The base
    text of a changed file is the exact text the agent last read (or the disk text when it never read it), so the
    resulting Proposal can refuse files that changed on disk in between. Thread-safe.
    """

    def __init__(
        self,
        root: Path,
        read_disk: Callable[[Path], str] | None = None,
        *,
        max_file_size: int | None = None,
    ) -> None:
        self.root = Path(root).absolute()
        self.max_file_size = max_file_size
        self._read_disk = read_disk
        self._changes: dict[str, str | None] = {}  # rel -> new text, None = deleted
        # rel -> text the change was made against, None = the file did not exist
        self._base: dict[str, str | None] = {}
        self._seen: dict[str, str] = {}  # rel -> text last read for files not (yet) changed
        self._lock = threading.RLock()

    @property
    def reads_disk_directly(self) -> bool:
        """True when unchanged files are read from disk as-is (no read_disk hook substitutes other text)."""
        return self._read_disk is None

    # ----- paths ------------------------------------------------------------------------------------------

    def normalize(self, rel: str) -> str:
        """Canonical workspace-relative POSIX path of `rel` ("." for the root); PathError when it escapes."""
        return normalize_rel(self.root, rel)

    def abspath(self, rel: str) -> Path:
        """The real absolute path of `rel` inside the root."""
        return resolve_in_workspace(self.root, rel)

    # ----- reading ----------------------------------------------------------------------------------------

    def read_text(self, rel: str) -> str:
        """The current text of a file: the proposed text if changed, else the disk (or editor buffer) text.

        Raises FileNotFoundError, IsADirectoryError, PathError (escape, non-regular file), NotTextError or
        FileTooLargeError with messages fit to show the model.
        """
        key, path = self._file_key_path(rel)
        text, from_disk = self._current_text(key, path)
        if from_disk:
            with self._lock:
                if key not in self._changes:
                    self._seen[key] = text
        return text

    def view_text(self, rel: str) -> str:
        """Like read_text, but does not record the text as a base (for bulk reads such as searches)."""
        key, path = self._file_key_path(rel)
        return self._current_text(key, path)[0]

    def _current_text(self, key: str, path: Path) -> tuple[str, bool]:
        """A file's text in this run, and whether it came from disk (False: the run's own change)."""
        with self._lock:
            if key in self._changes:
                text = self._changes[key]
                if text is None:
                    raise FileNotFoundError(f"{key}: file not found (deleted earlier in this run)")
                return text, False
            if self._is_virtual_dir(key):
                raise IsADirectoryError(f"{key}: is a directory, not a file")
        return self._load_disk(key, path), True

    def exists(self, rel: str) -> bool:
        """True for files and directories visible in this run's view."""
        key = self.normalize(rel)
        with self._lock:
            if key in self._changes:
                return self._changes[key] is not None
            if self._is_virtual_dir(key):
                return True
        return os.path.exists(self.root / key)

    def is_file(self, rel: str) -> bool:
        """True when `rel` is a (possibly proposed) regular file in this run's view."""
        key = self.normalize(rel)
        with self._lock:
            if key in self._changes:
                return self._changes[key] is not None
        try:
            return stat.S_ISREG((self.root / key).stat().st_mode)
        except OSError:
            return False

    def is_dir(self, rel: str) -> bool:
        """True when `rel` is a directory on disk or a parent of a file proposed in this run."""
        key = self.normalize(rel)
        with self._lock:
            if key in self._changes:
                return False
            if self._is_virtual_dir(key):
                return True
        return key == "." or (self.root / key).is_dir()

    def change_kind(self, rel: str) -> str | None:
        """'created', 'modified' or 'deleted' for a path changed in this run, else None."""
        key = self.normalize(rel)
        with self._lock:
            if key not in self._changes:
                return None
            if self._changes[key] is None:
                return "deleted"
            return "created" if self._base[key] is None else "modified"

    def base_text(self, rel: str) -> str | None:
        """The text a changed file was changed against (None for a created file or an unchanged path)."""
        with self._lock:
            return self._base.get(self.normalize(rel))

    # ----- writing ----------------------------------------------------------------------------------------

    def write_text(self, rel: str, text: str) -> None:
        """Propose `text` as the file's new content (creating it, and implicitly its parent directories)."""
        if not isinstance(text, str):
            raise TypeError("file content must be a string")
        key = self._file_key(rel)
        check_writable_rel(key)
        with self._lock:
            self._check_parents(key)
            if key in self._changes:
                base = self._base[key]
            else:
                if self._is_virtual_dir(key) or (self.root / key).is_dir():
                    raise IsADirectoryError(f"{key}: is a directory; cannot write a file there")
                base = self._seen[key] if key in self._seen else self._disk_text_or_none(key)
            if text == base:
                self._changes.pop(key, None)
                self._base.pop(key, None)
                if base is not None:
                    self._seen[key] = base
                return
            self._changes[key] = text
            self._base[key] = base
            self._seen.pop(key, None)

    def delete(self, rel: str) -> None:
        """Propose deleting a file (a file created in this run simply disappears)."""
        key = self._file_key(rel)
        check_writable_rel(key)
        with self._lock:
            if key in self._changes:
                if self._changes[key] is None:
                    raise FileNotFoundError(f"{key}: file not found (already deleted in this run)")
                if self._base[key] is None:
                    del self._changes[key], self._base[key]
                    return
                self._changes[key] = None
                return
            if self._is_virtual_dir(key) or (self.root / key).is_dir():
                raise IsADirectoryError(f"{key}: is a directory; delete_file removes files only")
            base = self._seen[key] if key in self._seen else self._disk_text_or_none(key)
            if base is None:
                raise FileNotFoundError(f"{key}: file not found")
            self._changes[key] = None
            self._base[key] = base
            self._seen.pop(key, None)

    def revert(self, rel: str) -> bool:
        """Drop the proposed change to one file; True when there was one."""
        key = self.normalize(rel)
        with self._lock:
            self._base.pop(key, None)
            return self._changes.pop(key, _MISSING) is not _MISSING

    # ----- the run's result -------------------------------------------------------------------------------

    def changed_paths(self) -> list[str]:
        """Sorted paths changed (modified, created or deleted) in this run."""
        with self._lock:
            return sorted(self._changes)

    def created_paths(self) -> list[str]:
        """Sorted paths of files created in this run."""
        with self._lock:
            return sorted(k for k, v in self._changes.items() if v is not None and self._base[k] is None)

    def deleted_paths(self) -> list[str]:
        """Sorted paths of files deleted in this run."""
        with self._lock:
            return sorted(k for k, v in self._changes.items() if v is None)

    def read_texts(self) -> dict[str, str]:
        """rel path -> the text the agent last read of each unchanged file (an editor buffer's, with a read hook)."""
        with self._lock:
            return dict(self._seen)

    def overrides(self) -> dict[str, str | None]:
        """rel path -> proposed text (None = deleted), e.g. for WorkspaceIndex.search(overrides=...)."""
        with self._lock:
            return dict(self._changes)

    def checked_changes(self) -> list[FileChange]:
        """The changes the run's own checks (tests, syntax) judge: the proposal's (a front-end that writes each
        approved change at once adds those it wrote)."""
        return self.to_proposal().changes

    def to_proposal(self, summary: str = "") -> Proposal:
        """The run's changes as a Proposal against the exact base texts."""
        changes: list[FileChange] = []
        with self._lock:
            for key in sorted(self._changes):
                new, base = self._changes[key], self._base[key]
                kind = "delete" if new is None else "create" if base is None else "modify"
                changes.append(FileChange(key, kind, base, new))
        return Proposal(changes, summary)

    def materialize(self, dest: Path) -> None:
        """Write the changed files into `dest`, a scratch copy of the workspace (deleted files are removed)."""
        dest = Path(dest)
        for key, text in self.overrides().items():
            target = dest / key
            if text is None:
                try:
                    target.unlink()
                except FileNotFoundError:
                    pass
            else:
                write_disk_text(target, text)

    # ----- internals --------------------------------------------------------------------------------------

    def _file_key(self, rel: str) -> str:
        """Normalize a path that must name a file (not the root)."""
        return self._file_key_path(rel)[0]

    def _file_key_path(self, rel: str) -> tuple[str, Path]:
        """(normalized key, real path) of a path that must name a file (not the root)."""
        key, path = resolve_key(self.root, rel)
        if key == ".":
            raise IsADirectoryError(f"{rel}: is the workspace root, not a file")
        return key, path

    def _is_virtual_dir(self, key: str) -> bool:
        """True when some file created in this run lies under `key`."""
        prefix = "" if key == "." else key + "/"
        return any(k.startswith(prefix) and v is not None for k, v in self._changes.items())

    def _check_parents(self, key: str) -> None:
        """Refuse a path whose parent is an existing (or proposed) file."""
        parts = key.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if self._changes.get(parent) is not None or (
                parent not in self._changes and (self.root / parent).is_file()
            ):
                raise NotADirectoryError(f"{key}: its parent {parent} is a file, not a directory")

    def _disk_text_or_none(self, key: str) -> str | None:
        """The disk text of `key`, or None when no file exists there."""
        if not os.path.lexists(self.root / key):
            return None
        return self._load_disk(key)

    def _load_disk(self, key: str, path: Path | None = None) -> str:
        """Read a regular text file from disk (or through the read_disk hook) with every safety check."""
        path = path or resolve_in_workspace(self.root, key)
        st = require_regular_file(path, key)
        if self.max_file_size is not None and st.st_size > self.max_file_size:
            raise FileTooLargeError(
                f"{key}: is {st.st_size:,} bytes, over the {self.max_file_size:,}-byte limit; "
                "use search_text to find the lines you need"
            )
        try:
            text = self._read_disk(path) if self._read_disk else read_disk_text(path)
        except PathError as exc:
            if "UTF-8" in str(exc):
                raise NotTextError(
                    f"{key}: is a binary (or non-UTF-8) file; only text files can be read"
                ) from None
            raise
        if text is None:
            raise FileNotFoundError(f"{key}: file not found")
        if "\x00" in text:
            raise NotTextError(f"{key}: is a binary file (contains NUL bytes); only text files can be read")
        return text
