"""The last proposal of a workspace and the last apply, kept in the user state dir so `apply` and `undo` work later.

`lsp-agent ask` saves the proposal it showed (with the base text of every file, for the stale-file check) so
`lsp-agent apply` writes exactly what the user saw without running the model again. Every apply saves the text
each file had before and has after, so `lsp-agent undo` restores the pre-apply text exactly and refuses a file
that changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lsp_agent.workspace.paths import PathError, check_writable_rel, resolve_in_workspace
from lsp_agent.workspace.proposal import Proposal, read_disk_text, write_disk_text

RECORD_VERSION = 1
LAST_PROPOSAL = "last-proposal.json"
LAST_APPLY = "last-apply.json"


class RecordError(Exception):
    """A record is missing, damaged or does not fit the workspace; the message says what to do."""


def state_dir() -> Path:
    """The user state dir of lsp-agent (XDG_STATE_HOME on Linux)."""
    from platformdirs import user_state_dir

    return Path(user_state_dir("lsp-agent"))


def workspace_dir(root: Path, base: Path | None = None) -> Path:
    """Where one workspace's records live: a folder named after a hash of its resolved path."""
    resolved = Path(root).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return (base or state_dir()) / "workspaces" / f"{resolved.name[:40] or 'root'}-{digest}"


def now_iso() -> str:
    """The current UTC time, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # private, like the state dir: the records hold the text of the user's files
    write_disk_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n", new_mode=0o600)


def _read_json(path: Path, what: str) -> dict[str, Any] | None:
    """The JSON object in `path`, None when there is none; RecordError when it is damaged."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RecordError(
            f"the {what} record {path} is unreadable ({exc}); delete it and run again"
        ) from None
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        raise RecordError(f"the {what} record {path} has an unknown format; delete it and run again")
    return data


@dataclass
class LastProposal:
    """The proposal one `ask` showed: what `lsp-agent apply` writes, checked against the base texts it holds."""

    root: str
    run_id: str
    task: str
    stop_reason: str
    proposal: Proposal
    created_at: str = field(default_factory=now_iso)
    applied_at: str | None = None  # set once applied; cleared again by undo

    def save(self, base: Path | None = None) -> Path:
        """Write it as the workspace's last proposal (replacing the previous one)."""
        path = workspace_dir(Path(self.root), base) / LAST_PROPOSAL
        data = {
            "version": RECORD_VERSION,
            "root": self.root,
            "runId": self.run_id,
            "task": self.task,
            "stopReason": self.stop_reason,
            "createdAt": self.created_at,
            "appliedAt": self.applied_at,
            "proposal": self.proposal.to_dict(),
        }
        _write_json(path, data)
        return path

    @classmethod
    def load(cls, root: Path, base: Path | None = None) -> LastProposal | None:
        """The workspace's last proposal, None when no `ask` saved one."""
        data = _read_json(workspace_dir(root, base) / LAST_PROPOSAL, "last proposal")
        if data is None:
            return None
        try:
            proposal = Proposal.from_dict(data["proposal"])
            return cls(
                str(data["root"]),
                str(data["runId"]),
                str(data.get("task", "")),
                str(data.get("stopReason", "")),
                proposal,
                str(data.get("createdAt", "")),
                data.get("appliedAt"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(
                f"the last proposal record is damaged ({exc}); run `lsp-agent ask` again"
            ) from None


@dataclass
class AppliedFile:
    """One file of an apply: its exact text before and after (None = absent) and its mode before."""

    path: str
    before: str | None
    after: str | None
    mode: int | None = None


@dataclass
class ApplyRecord:
    """What one apply wrote, so that undo can restore every file exactly."""

    root: str
    run_id: str
    files: list[AppliedFile]
    applied_at: str = field(default_factory=now_iso)
    created_dirs: list[str] = field(
        default_factory=list
    )  # directories the apply made (undo removes them if empty)

    def save(self, base: Path | None = None) -> Path:
        """Write it as the workspace's last apply."""
        path = workspace_dir(Path(self.root), base) / LAST_APPLY
        data = {
            "version": RECORD_VERSION,
            "root": self.root,
            "runId": self.run_id,
            "appliedAt": self.applied_at,
            "files": [asdict(f) for f in self.files],
            "createdDirs": list(self.created_dirs),
        }
        _write_json(path, data)
        return path

    @classmethod
    def load(cls, root: Path, base: Path | None = None) -> ApplyRecord | None:
        """The workspace's last apply, None when nothing was applied (or it was undone)."""
        data = _read_json(workspace_dir(root, base) / LAST_APPLY, "last apply")
        if data is None:
            return None
        try:
            files = [AppliedFile(**f) for f in data["files"]]
            dirs = [str(d) for d in data.get("createdDirs", [])]
            return cls(str(data["root"]), str(data["runId"]), files, str(data.get("appliedAt", "")), dirs)
        except (KeyError, TypeError) as exc:
            raise RecordError(f"the last apply record is damaged ({exc}); nothing can be undone") from None

    @staticmethod
    def forget(root: Path, base: Path | None = None) -> None:
        """Drop the record (after an undo, so a second undo says there is nothing to undo)."""
        (workspace_dir(root, base) / LAST_APPLY).unlink(missing_ok=True)


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def apply_with_record(root: Path, proposal: Proposal, run_id: str) -> tuple[list[str], ApplyRecord | None]:
    """Apply a proposal all or nothing; returns (errors, the record of what was written, saved for undo)."""
    root = Path(root).resolve()
    modes = {c.path: _mode(root / c.path) for c in proposal.changes}
    missing = missing_dirs(root, [c.path for c in proposal.changes if c.kind == "create"])
    errors = proposal.apply_to_disk(root)
    written: list[AppliedFile] = []
    for change in proposal.changes:
        try:
            now = read_disk_text(resolve_in_workspace(root, change.path))
        except (PathError, OSError):
            continue
        if now == change.new_text and now != change.base_text:
            written.append(AppliedFile(change.path, change.base_text, change.new_text, modes[change.path]))
    if not written:
        return errors, None
    created = [d for d in missing if (root / d).is_dir()]
    record = ApplyRecord(str(root), run_id, written, created_dirs=created)
    record.save()
    return errors, record


def undo_conflicts(root: Path, record: ApplyRecord) -> list[str]:
    """Why each file of an apply cannot be restored now (changed, created or deleted since)."""
    problems: list[str] = []
    for item in record.files:
        try:
            check_writable_rel(item.path)
            current = read_disk_text(resolve_in_workspace(root, item.path))
        except (PathError, OSError) as exc:
            problems.append(f"{item.path}: {exc}")
            continue
        if (problem := drift_since_apply(item.path, current, item.after)) is not None:
            problems.append(problem)
    return problems


def drift_since_apply(path: str, current: str | None, after: str | None) -> str | None:
    """Why a file cannot be restored: how its text now differs from what the apply left; None when it does not."""
    if current == after:
        return None
    if after is None:
        return f"{path}: was created again since the apply (the apply had deleted it)"
    if current is None:
        return f"{path}: was deleted since the apply"
    return f"{path}: changed since the apply"


def undo_apply(root: Path, record: ApplyRecord) -> list[str]:
    """Restore the pre-apply text of every file, all or nothing; returns the refusals (empty on success)."""
    root = Path(root).resolve()
    problems = undo_conflicts(root, record)
    if problems:
        return problems + ["nothing was changed: edit those files back or undo them by hand"]
    for item in record.files:
        target = resolve_in_workspace(root, item.path)
        if item.before is None:
            target.unlink()
            continue
        write_disk_text(target, item.before)
        if item.after is None and item.mode is not None:
            os.chmod(target, item.mode)
    remove_empty_dirs(root, record.created_dirs)
    return []


def missing_dirs(root: Path, rels: list[str]) -> list[str]:
    """The directories (relative, POSIX) that writing the files `rels` would create: absent now, inside the root."""
    missing: set[str] = set()
    for rel in rels:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            if sub not in missing and not os.path.lexists(root / sub):
                missing.add(sub)
    return sorted(missing)


def remove_empty_dirs(root: Path, rels: list[str]) -> list[str]:
    """Remove the directories `rels` (made by an apply) that are empty now, deepest first; returns those removed.

    A directory that holds anything (a file the user added since) stays, and so do its parents; a path that left
    the root or is no longer a plain directory is never touched.
    """
    removed: list[str] = []
    for rel in sorted(set(rels), key=lambda r: r.count("/"), reverse=True):
        try:
            target = resolve_in_workspace(root, rel)
        except PathError:
            continue
        if target == Path(root).resolve() or target.is_symlink() or not target.is_dir():
            continue
        try:
            target.rmdir()  # fails on a directory that is not empty: it stays
        except OSError:
            continue
        removed.append(rel)
    return removed


__all__ = [
    "AppliedFile",
    "ApplyRecord",
    "LastProposal",
    "RecordError",
    "apply_with_record",
    "missing_dirs",
    "remove_empty_dirs",
    "state_dir",
    "undo_apply",
    "undo_conflicts",
    "workspace_dir",
]
