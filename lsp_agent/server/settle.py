"""Settling pending proposals: what really reached the user's text, what the user rejected, and who hears of it.

The server never takes the client's word that an edit was applied: a change counts as applied when the
workspace/applyEdit result says so, or when the document text (open buffer, else disk) now holds it. Each outcome
becomes a note on the run's session (the next exchange's prompt shows it) and an `edits` event to the editor.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_agent.server import undo
from lsp_agent.server.edits import DocumentState, FileProposal
from lsp_agent.workspace.hunks import Hunk, split_lines
from lsp_agent.workspace.rebase import hunk_is_applied

if TYPE_CHECKING:
    from lsp_agent.server.proposals import PendingProposal
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

EXCERPT_CHARS = 200

# One file's part of an outcome: the proposal's hunks, or None for the whole file (created/deleted/all hunks).
Selection = list[tuple[FileProposal, list[Hunk] | None]]


@dataclass(frozen=True)
class Settled:
    """One settled piece of a proposal, as the session note and the event describe it."""

    path: str
    what: str  # "line 3", "lines 4-6", "new file", "deleted file", "all changes"
    new_text: str = ""  # what the agent wanted there (for rejections)

    def to_dict(self) -> dict[str, str]:
        """JSON form for the `edits` event."""
        return {"path": self.path, "what": self.what}


def hunk_id(fp: FileProposal, index: int) -> str:
    """A stable name for a hunk: its old and new lines (plus an ordinal among identical hunks).

    Indexes shift when a neighbouring hunk is applied or rejected; this id does not, so a code action computed
    before that still names the hunk the user saw.
    """
    digest = _hunk_digest(fp, fp.hunks[index])
    ordinal = sum(1 for h in fp.hunks[:index] if _hunk_digest(fp, h) == digest)
    return f"{digest}-{ordinal}"


def _hunk_digest(fp: FileProposal, hunk: Hunk) -> str:
    base = split_lines(fp.change.base_text or "")
    old = "".join(base[hunk.start : hunk.end])
    return hashlib.sha1(f"{old}\0{hunk.new_text}".encode(), usedforsecurity=False).hexdigest()[:10]


def find_hunk(fp: FileProposal, ref: Any) -> Hunk | None:
    """The hunk a command names: by id (a string from a code action) or by index (diagnostic data)."""
    if isinstance(ref, str):
        return next((h for i, h in enumerate(fp.hunks) if hunk_id(fp, i) == ref), None)
    if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < len(fp.hunks):
        return fp.hunks[ref]
    return None


# ----- what the text shows ------------------------------------------------------------------------------------


def applied_in_text(fp: FileProposal, state: DocumentState) -> list[Hunk] | None:
    """What of a pending file the user's text now holds: hunks, [] for nothing, None for the whole file."""
    change = fp.change
    if change.kind == "create":
        return None if state.text is not None and state.text == change.new_text else []
    if change.kind == "delete":
        return None if state.text is None else []
    if state.text is None:
        return []
    text = state.text
    _, refusals = fp.rebased(text)  # an applied hunk no longer applies: only refused hunks are candidates
    return [
        r.hunk
        for r in refusals
        if (not r.hunk.new_lines or r.hunk.new_text in text)
        and hunk_is_applied(change.path, change.base_text or "", r.hunk, text)
    ]


def reconcile_applied(server: AgentServer, uris: Iterable[str] | None = None) -> bool:
    """Settle every pending change the user's text now holds (only in `uris` when given). True if any was."""
    wanted = set(uris) if uris is not None else None
    changed = False
    for pending in server.proposals:
        selection: Selection = []
        for fp in list(pending.files):
            if wanted is not None and fp.uri not in wanted:
                continue
            try:
                found = applied_in_text(fp, server.document_state(fp.abspath))
            except Exception:  # a failed check leaves the change pending; hints and commands go on
                log.exception("checking %s for applied changes failed", fp.change.path)
                continue
            if found is None or found:
                selection.append((fp, found))
        if selection:
            settle(server, pending, "applied", selection, via="found in the document text")
            undo.remember_found(
                server, pending.run_id, pending.session_id, [fp for fp, _ in selection], pending.root
            )
            changed = True
    return changed


# ----- settling -----------------------------------------------------------------------------------------------


def settle(
    server: AgentServer,
    pending: PendingProposal,
    outcome: str,
    selection: Selection,
    *,
    reason: str | None = None,
    via: str = "",
) -> list[Settled]:
    """Take applied or rejected changes out of a pending proposal; note it on the session and tell the editor."""
    settled: list[Settled] = []
    for fp, hunks in selection:
        if not any(f is fp for f in pending.files):
            continue
        settled.extend(_describe(fp, hunks))
        if outcome == "applied":
            pending.applied_any = True
            if hunks is None:
                pending.drop([fp])
            else:
                pending.drop_hunks(fp, hunks)
        elif hunks is None:
            pending.drop([fp])
        else:
            pending.reject_hunks(fp, hunks)
    if not settled:
        return settled
    note = session_note(pending, outcome, settled, reason)
    if pending.session_id:
        server.session(pending.session_id, pending.root).record(note)
    server.log_line(f"[run {pending.run_id}] {note}" + (f" ({via})" if via else ""))
    server.proposals.prune(pending.run_id)
    _notify(server, pending, outcome, settled, reason)
    return settled


def _describe(fp: FileProposal, hunks: list[Hunk] | None) -> list[Settled]:
    """The settled pieces of one file."""
    path, kind = fp.change.path, fp.change.kind
    if kind == "create":
        return [Settled(path, "new file", fp.change.new_text or "")]
    if kind == "delete":
        return [Settled(path, "deleted file")]
    chosen = fp.hunks if hunks is None else hunks
    return [Settled(path, h.describe(), h.new_text) for h in chosen]


def session_note(pending: PendingProposal, outcome: str, settled: list[Settled], reason: str | None) -> str:
    """What the next exchange reads about this outcome."""
    by_file: dict[str, list[str]] = {}
    for s in settled:
        part = s.what
        if outcome == "rejected" and s.new_text.strip():
            part += f" (the agent wanted: {_excerpt(s.new_text)})"
        by_file.setdefault(s.path, []).append(part)
    parts = "; ".join(f"{path} {', '.join(items)}" for path, items in by_file.items())
    note = f"user {outcome} changes of run {pending.run_id} ({pending.summary}): {parts}"
    if reason and reason.strip():
        note += f"; reason: {reason.strip()}"
    if pending.files:
        note += f"; still pending: {', '.join(f.change.path for f in pending.files)}"
    return note


def _excerpt(text: str) -> str:
    """A short one-line form of new text."""
    flat = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return repr(flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 3] + "...")


def _notify(
    server: AgentServer, pending: PendingProposal, outcome: str, settled: list[Settled], reason: str | None
) -> None:
    """Refresh the hints, then send the `edits` event: what was settled and the proposal's state now."""
    payload: dict[str, Any] = {
        "runId": pending.run_id,
        "kind": "edits",
        "outcome": outcome,
        "changes": [s.to_dict() for s in settled],
        "state": pending.state,
        "remaining": [f.change.path for f in pending.files],
    }
    if reason and reason.strip():
        payload["reason"] = reason.strip()
    server.publish_hints(reconcile=False)  # the hints are gone before the editor hears of the outcome
    server.protocol.notify("lspAgent/event", payload)
