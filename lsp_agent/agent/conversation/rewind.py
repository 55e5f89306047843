"""Rewinding a conversation: its exchanges listed with what each applied, and a rewind to exchange N that restores
the files the later exchanges applied (file by file, refusing each changed since) and continues from N.

The files' history is the workspace's apply journal (workspace/apply_journal.py); the conversation marks the later
exchanges rewound, so the next prompt leaves them out. `rewind_on_disk` writes the files itself (the CLI, ACP); the
language server builds a WorkspaceEdit from the same plan instead (server/rewind.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.agent.conversation.session import Session
from lsp_agent.workspace.applied import ApplyRecord, RecordError, remove_empty_dirs
from lsp_agent.workspace.apply_journal import (
    RewindFile,
    applied_by_run,
    created_dirs_of,
    forget_restored,
    read_journal,
    restore_on_disk,
    rewind_plan,
)


@dataclass
class RewindOutcome:
    """What a rewind did: the exchanges dropped, the files restored, and each file refused with why."""

    number: int
    dropped: list[str]  # run ids of the exchanges after `number`
    restored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the language server's answer)."""
        return {
            "exchange": self.number,
            "dropped": self.dropped,
            "restored": self.restored,
            "refused": self.refused,
        }

    def summary(self) -> str:
        """One line: what was restored and what was refused."""
        head = f"rewound to exchange {self.number}: {len(self.dropped)} later exchange(s) dropped from the conversation"
        files = f"{len(self.restored)} file(s) restored"
        if self.refused:
            files += f", {len(self.refused)} refused (changed since the apply: restore them by hand)"
        return f"{head}; {files}"


def exchange_rows(session: Session, root: Path) -> list[dict[str, Any]]:
    """The conversation's exchanges, numbered from 1, with the files each applied (for pickers and --list)."""
    applied = applied_by_run(read_journal(root))
    rows = []
    for number, exchange in enumerate(session.exchanges, start=1):
        rows.append(
            {
                "number": number,
                "runId": exchange.run_id,
                "task": exchange.task,
                "outcome": exchange.outcome,
                "applied": applied.get(exchange.run_id, []),
                "rewound": exchange.rewound,
                "retried": exchange.retried,
            }
        )
    return rows


def default_target(session: Session) -> int:
    """The exchange a rewind without a number goes back to: the one before the newest that was not rewound."""
    kept = [n for n, e in enumerate(session.exchanges, start=1) if not e.rewound]
    if not kept:
        raise ValueError("nothing to rewind: the conversation has no exchange left")
    return kept[-1] - 1


def plan_rewind(session: Session, root: Path, number: int) -> tuple[list[str], list[RewindFile]]:
    """(run ids dropped, files to restore) for a rewind to `number`; ValueError when the rewind cannot be."""
    dropped = [e.run_id for e in session.after(number)]
    return dropped, rewind_plan(read_journal(root), set(dropped))


def finish_rewind(session: Session, root: Path, number: int, dropped: list[str], restored: list[str]) -> None:
    """After the files were restored: the journal forgets them, the conversation continues from `number`, and an
    undo record of a dropped run is forgotten (its files are back already)."""
    runs = set(dropped)
    entries = read_journal(root)
    remove_empty_dirs(root, created_dirs_of(entries, runs))
    forget_restored(root, runs, set(restored))
    session.rewind(number)
    session.record(
        f"user rewound the conversation to exchange {number}; restored: {', '.join(restored) or 'none'}"
    )
    try:
        record = ApplyRecord.load(root)
    except RecordError:
        record = None
    if record is not None and record.run_id in runs:
        ApplyRecord.forget(root)


def rewind_on_disk(session: Session, root: Path, number: int) -> RewindOutcome:
    """Rewind the conversation to exchange `number`, writing the files back on disk."""
    dropped, plan = plan_rewind(session, root, number)
    restored, refused = restore_on_disk(root, plan)
    finish_rewind(session, root, number, dropped, restored)
    return RewindOutcome(number, dropped, restored, refused)
