"""Proposals: the per-file changes a run wants, as diffs against the exact text it read, applied only on request."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lsp_agent.workspace.paths import PathError, check_writable_rel, resolve_in_workspace
from lsp_agent.workspace.python_parse import parse_python

CHANGE_KINDS = ("modify", "create", "delete")
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class FileChange:
    """One file's proposed change: modify, create or delete, against the exact base text the agent read."""

    path: str
    kind: str
    base_text: str | None
    new_text: str | None

    def __post_init__(self) -> None:
        if self.kind not in CHANGE_KINDS:
            raise ValueError(f"FileChange.kind must be one of {CHANGE_KINDS}, got {self.kind!r}")
        if self.kind == "create" and (self.base_text is not None or self.new_text is None):
            raise ValueError(f"{self.path}: a create needs new_text and no base_text")
        if self.kind == "delete" and (self.base_text is None or self.new_text is not None):
            raise ValueError(f"{self.path}: a delete needs base_text and no new_text")
        if self.kind == "modify" and (self.base_text is None or self.new_text is None):
            raise ValueError(f"{self.path}: a modify needs both base_text and new_text")

    def unified_diff(self) -> str:
        """A git-style unified diff of this change (/dev/null for the missing side)."""
        old = self.base_text or ""
        new = self.new_text or ""
        fromfile = "/dev/null" if self.kind == "create" else f"a/{self.path}"
        tofile = "/dev/null" if self.kind == "delete" else f"b/{self.path}"
        lines = difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile, tofile, n=3
        )
        out: list[str] = []
        for line in lines:
            if line.endswith("\n"):
                out.append(line)
            else:
                out.append(line + "\n\\ No newline at end of file\n")
        if not out:  # e.g. creating an empty file
            return f"--- {fromfile}\n+++ {tofile}\n"
        return "".join(out)

    def line_counts(self) -> tuple[int, int]:
        """(added, removed) line counts of this change."""
        added = removed = 0
        for line in self.unified_diff().splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (camelCase keys, as editor clients expect)."""
        return {
            "path": self.path,
            "kind": self.kind,
            "baseText": self.base_text,
            "newText": self.new_text,
            "diff": self.unified_diff(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileChange:
        """Inverse of to_dict (the diff is recomputed, never trusted)."""
        return cls(str(data["path"]), str(data["kind"]), data.get("baseText"), data.get("newText"))


@dataclass
class Proposal:
    """All the changes of one run plus the agent's summary; nothing touches disk until apply_to_disk."""

    changes: list[FileChange]
    summary: str = ""
    checks_failed: list[str] = field(
        default_factory=list
    )  # the run's own checks this proposal fails (tests, syntax)

    def is_empty(self) -> bool:
        """True when the run changed no file."""
        return not self.changes

    def paths(self) -> list[str]:
        """The changed paths, in order."""
        return [c.path for c in self.changes]

    def unified_diff(self) -> str:
        """All changes as one unified diff."""
        return "".join(c.unified_diff() for c in self.changes)

    def stat_text(self) -> str:
        """A one-line summary such as '2 files changed (1 created), +10 -3'."""
        added = removed = 0
        for change in self.changes:
            a, r = change.line_counts()
            added, removed = added + a, removed + r
        n = len(self.changes)
        kinds = [f"{sum(c.kind == k for c in self.changes)} {k}d" for k in ("create", "delete")]
        extra = ", ".join(k for k in kinds if not k.startswith("0 "))
        extra = f" ({extra})" if extra else ""
        return f"{n} file{'s' if n != 1 else ''} changed{extra}, +{added} -{removed}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: summary, changes (each with its diff) and the whole diff."""
        return {
            "summary": self.summary,
            "changes": [c.to_dict() for c in self.changes],
            "diff": self.unified_diff(),
            "stat": self.stat_text(),
            "checksFailed": list(self.checks_failed),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        """Inverse of to_dict."""
        changes = [FileChange.from_dict(c) for c in data.get("changes", [])]
        return cls(changes, str(data.get("summary", "")), [str(c) for c in data.get("checksFailed") or []])

    def conflicts(self, root: Path) -> list[str]:
        """Why each change cannot be applied now (file changed on disk since it was read, unsafe path, ...)."""
        errors: list[str] = []
        for change in self.changes:
            error = _conflict(root, change)
            if error:
                errors.append(error)
        return errors

    def apply_to_disk(self, root: Path, *, partial: bool = False) -> list[str]:
        """Write the changes to disk; returns the errors (empty on success).

        A file that changed on disk since the agent read it is refused. By default nothing is written when any
        change is refused (the proposal is all or nothing); with partial=True the other changes are applied.
        """
        errors: list[str] = []
        applicable: list[FileChange] = []
        for change in self.changes:
            error = _conflict(root, change)
            if error:
                errors.append(error)
            else:
                applicable.append(change)
        if errors and not partial:
            return errors + [f"nothing was written: {len(errors)} of {len(self.changes)} changes refused"]
        for change in applicable:
            try:
                _apply(root, change)
            except OSError as exc:
                errors.append(f"{change.path}: could not be written: {exc.strerror or exc}")
        return errors


def read_disk_text(path: Path) -> str | None:
    """The exact text of a regular file (None when missing); raises PathError for non-regular or non-UTF-8."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise PathError(f"{path.name}: not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PathError(f"{path.name}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PathError(f"{path.name}: not UTF-8 text") from None


def write_disk_text(path: Path, text: str, *, new_mode: int | None = None) -> None:
    """Write `text` exactly (no newline translation) via a temp file and rename.

    An existing file keeps its mode (its executable bit too); a new one gets `new_mode`, by default the mode a file
    the user creates gets (0666 less the umask), not the temp file's private 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = new_mode if new_mode is not None else 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".lsp-agent.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where Linux shows it (/proc), else set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _conflict(root: Path, change: FileChange) -> str | None:
    """None when `change` can be applied to the current disk state, else the reason it cannot."""
    try:
        check_writable_rel(change.path)
        target = resolve_in_workspace(root, change.path)
        current = read_disk_text(target)
    except PathError as exc:
        return f"{change.path}: {exc}"
    except OSError as exc:
        return f"{change.path}: cannot be read: {exc.strerror or exc}"
    if change.kind == "create":
        if current is not None:
            return f"{change.path}: was created on disk since the agent started; not overwritten"
        return None
    if current is None:
        return f"{change.path}: was deleted on disk since the agent read it; refused"
    if current != change.base_text:
        return f"{change.path}: changed on disk since the agent read it; refused (re-run the task on the new text)"
    return None


def _apply(root: Path, change: FileChange) -> None:
    """Perform one already-checked change."""
    target = resolve_in_workspace(root, change.path)
    if change.kind == "delete":
        target.unlink()
    else:
        assert change.new_text is not None
        write_disk_text(target, change.new_text)


class _HasProposal(Protocol):
    def to_proposal(self, summary: str = "") -> Proposal: ...


def check_syntax(source: Proposal | _HasProposal) -> list[str]:
    """Syntax errors in the Python files of a proposal (or an overlay's changes), as 'path:line: message'."""
    proposal = source if isinstance(source, Proposal) else source.to_proposal()
    errors: list[str] = []
    for change in proposal.changes:
        if change.new_text is None or not change.path.endswith(PYTHON_SUFFIXES):
            continue
        error = python_syntax_error(change.path, change.new_text)
        if error:
            errors.append(error)
    return errors


def python_syntax_error(path: str, text: str) -> str | None:
    """'path:line: message' for the first syntax error in `text`, or None when it parses."""
    try:
        parse_python(text, path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        msg = exc.msg or "invalid syntax"
        detail = f" (column {exc.offset})" if exc.offset else ""
        return f"{path}:{line}: {msg}{detail}"
    except ValueError as exc:  # NUL bytes
        return f"{path}:1: {exc}"
    return None


__all__ = [
    "FileChange",
    "Proposal",
    "check_syntax",
    "current_umask",
    "python_syntax_error",
    "read_disk_text",
    "write_disk_text",
]
