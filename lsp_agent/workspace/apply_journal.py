"""Every apply of a workspace, per run, so that a conversation can be rewound: the files its later exchanges
applied are restored to their exact text from before, file by file, refusing each file changed since.

The journal is `applied-journal.jsonl` in the workspace's records folder (beside `last-apply.json`, private to the
user): one line per apply, `{"runId", "at", "files": [{path, before, after, mode}], "createdDirs"}`, written by
every front-end (`lsp-agent ask --apply` / `apply`, the language server's applyEdits and code actions, ACP's
approved writes). An exchange is a run: rewinding a conversation to exchange N restores what the runs of the
exchanges after N applied.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.workspace.applied import (
    AppliedFile,
    RecordError,
    drift_since_apply,
    now_iso,
    workspace_dir,
)
from lsp_agent.workspace.paths import PathError, check_writable_rel, resolve_in_workspace
from lsp_agent.workspace.proposal import read_disk_text, write_disk_text

JOURNAL = "applied-journal.jsonl"
MAX_ENTRIES = 300  # applies kept (the oldest are dropped; they can no longer be rewound)


@dataclass
class JournalEntry:
    """One apply: the run it belongs to and each file's exact text before and after it."""

    run_id: str
    files: list[AppliedFile]
    at: str = field(default_factory=now_iso)
    created_dirs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """One journal line."""
        files = [asdict(f) for f in self.files]
        return {"runId": self.run_id, "at": self.at, "files": files, "createdDirs": self.created_dirs}

    @classmethod
    def from_dict(cls, data: Any) -> JournalEntry | None:
        """Inverse of to_dict; None for a line that is not an entry."""
        try:
            files = [AppliedFile(**f) for f in data["files"]]
            dirs = [str(d) for d in data.get("createdDirs") or []]
            return cls(str(data["runId"]), files, str(data.get("at") or ""), dirs)
        except (KeyError, TypeError, AttributeError):
            return None


@dataclass
class RewindFile:
    """One file to restore: the text it must hold now (what the last rewound apply left) and the text to restore."""

    path: str
    restore: str | None  # None: the file did not exist before (it is removed)
    expected: str | None  # None: the apply deleted it
    mode: int | None = None


def journal_path(root: Path, base: Path | None = None) -> Path:
    """The journal of a workspace."""
    return workspace_dir(root, base) / JOURNAL


def record_apply(
    root: Path,
    run_id: str,
    files: list[AppliedFile],
    created_dirs: list[str] | None = None,
    base: Path | None = None,
) -> None:
    """Add one apply to the workspace's journal (files whose text did not change are left out)."""
    changed = [f for f in files if f.before != f.after]
    if not changed:
        return
    path = journal_path(root, base)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(JournalEntry(run_id, changed, created_dirs=list(created_dirs or [])).to_dict())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # private: it holds the user's files
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(line + "\n")
    if path.stat().st_size > 1_000_000 and len(entries := read_journal(root, base)) > MAX_ENTRIES:
        write_journal(root, entries[-MAX_ENTRIES:], base)


def read_journal(root: Path, base: Path | None = None) -> list[JournalEntry]:
    """Every apply of the workspace, oldest first (damaged lines are skipped)."""
    try:
        text = journal_path(root, base).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RecordError(f"the apply journal {journal_path(root, base)} is unreadable ({exc})") from None
    out = []
    for line in text.splitlines():
        try:
            entry = JournalEntry.from_dict(json.loads(line))
        except ValueError:
            entry = None
        if entry is not None:
            out.append(entry)
    return out


def write_journal(root: Path, entries: list[JournalEntry], base: Path | None = None) -> None:
    """Replace the journal (after a rewind restored some of its files)."""
    text = "".join(json.dumps(e.to_dict()) + "\n" for e in entries)
    write_disk_text(journal_path(root, base), text, new_mode=0o600)


def applied_by_run(entries: list[JournalEntry]) -> dict[str, list[str]]:
    """The files each run applied (in the order first applied)."""
    out: dict[str, list[str]] = {}
    for entry in entries:
        paths = out.setdefault(entry.run_id, [])
        paths += [f.path for f in entry.files if f.path not in paths]
    return out


def rewind_plan(entries: list[JournalEntry], run_ids: set[str]) -> list[RewindFile]:
    """Per file the runs in `run_ids` applied: the text before their first apply and after their last one."""
    plan: dict[str, RewindFile] = {}
    for entry in entries:
        if entry.run_id not in run_ids:
            continue
        for f in entry.files:
            if f.path in plan:
                plan[f.path].expected = f.after
            else:
                plan[f.path] = RewindFile(f.path, f.before, f.after, f.mode)
    return list(plan.values())


def forget_restored(root: Path, run_ids: set[str], restored: set[str], base: Path | None = None) -> None:
    """Drop the restored files from the rewound runs' entries (a file refused stays, to be rewound later)."""
    kept = []
    for entry in read_journal(root, base):
        if entry.run_id in run_ids:
            entry.files = [f for f in entry.files if f.path not in restored]
        if entry.files:
            kept.append(entry)
    write_journal(root, kept, base)


def created_dirs_of(entries: list[JournalEntry], run_ids: set[str]) -> list[str]:
    """The directories the rewound runs' applies created."""
    return sorted({d for e in entries if e.run_id in run_ids for d in e.created_dirs})


def restore_on_disk(root: Path, plan: list[RewindFile]) -> tuple[list[str], list[str]]:
    """Write back each file's text from before, file by file: (restored paths, refusals saying why)."""
    root = Path(root).resolve()
    restored: list[str] = []
    refused: list[str] = []
    for item in plan:
        try:
            check_writable_rel(item.path)
            target = resolve_in_workspace(root, item.path)
            current = read_disk_text(target)
        except (PathError, OSError) as exc:
            refused.append(f"{item.path}: {exc}")
            continue
        if (problem := drift_since_apply(item.path, current, item.expected)) is not None:
            refused.append(problem)
            continue
        try:
            if item.restore is None:
                if current is not None:
                    target.unlink()
            else:
                write_disk_text(target, item.restore)
                if item.expected is None and item.mode is not None:
                    os.chmod(target, item.mode)
        except OSError as exc:
            refused.append(f"{item.path}: could not be restored ({exc})")
            continue
        restored.append(item.path)
    return restored, refused


__all__ = [
    "JournalEntry",
    "RewindFile",
    "applied_by_run",
    "created_dirs_of",
    "forget_restored",
    "read_journal",
    "record_apply",
    "restore_on_disk",
    "rewind_plan",
    "write_journal",
]
