"""Proposals waiting for the user: which runs have them, which files and ranges they touch, and their hints."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from lsp_agent.server.edits import FileProposal, StateReader, file_proposals, hunk_range
from lsp_agent.server.settle import hunk_id
from lsp_agent.workspace.hunks import Hunk, apply_hunks, compute_hunks, split_lines
from lsp_agent.workspace.proposal import FileChange, Proposal

DIAGNOSTIC_SOURCE = "lsp-agent"


@dataclass
class PendingProposal:
    """The changes one run proposed, still waiting for apply or reject (file by file)."""

    run_id: str
    root: Path
    proposal: Proposal
    session_id: str | None = None
    files: list[FileProposal] = field(default_factory=list)
    applied_any: bool = False  # some change of this proposal reached the user's text
    alternatives: list = field(default_factory=list)  # other lines that pass (server.alternatives)

    @classmethod
    def create(
        cls, run_id: str, root: Path, proposal: Proposal, session_id: str | None = None
    ) -> PendingProposal:
        """Split the proposal into files and hunks once, up front."""
        return cls(run_id, root, proposal, session_id, file_proposals(root, proposal))

    @property
    def summary(self) -> str:
        """A short one-line summary for titles; it starts with the checks the proposal fails, if any."""
        text = " ".join((self.proposal.summary or "").split())
        if not text:
            text = ", ".join(f.change.path for f in self.files[:3]) + (" ..." if len(self.files) > 3 else "")
        text = text if len(text) <= 80 else text[:77] + "..."
        return f"[{self.checks_text}] {text}" if self.checks_text else text

    @property
    def checks_text(self) -> str:
        """What the proposal's failed checks say in a title, else ''."""
        return checks_text(self.proposal.checks_failed)

    def by_uri(self, uri: str) -> FileProposal | None:
        """The pending file with this URI."""
        return next((f for f in self.files if f.uri == uri), None)

    def select(self, uris: list[str] | None) -> list[FileProposal]:
        """The pending files, or only those named (by URI or workspace-relative path)."""
        if not uris:
            return list(self.files)
        wanted = set(uris)
        return [f for f in self.files if f.uri in wanted or f.change.path in wanted]

    def drop(self, files: list[FileProposal]) -> None:
        """Forget files the user applied or rejected."""
        ids = {id(f) for f in files}
        self.files = [f for f in self.files if id(f) not in ids]

    def drop_hunk(self, fp: FileProposal, index: int) -> None:
        """Forget one applied hunk (by index)."""
        if 0 <= index < len(fp.hunks):
            self.drop_hunks(fp, [fp.hunks[index]])

    def drop_hunks(self, fp: FileProposal, hunks: list[Hunk]) -> None:
        """Forget applied hunks: they become part of the base, so the other hunks still apply cleanly."""
        if fp.change.kind == "modify" and hunks:
            base = apply_hunks(fp.change.base_text or "", hunks)
            _reset(fp, dataclasses.replace(fp.change, base_text=base))
        if not fp.hunks:
            self.drop([fp])

    def reject_hunks(self, fp: FileProposal, hunks: list[Hunk]) -> None:
        """Take rejected hunks out of the proposal: its new text keeps only the other hunks."""
        if fp.change.kind == "modify" and hunks:
            rejected = set(hunks)
            keep = [h for h in fp.hunks if h not in rejected]
            new_text = apply_hunks(fp.change.base_text or "", keep)
            _reset(fp, dataclasses.replace(fp.change, new_text=new_text))
        if not fp.hunks or fp.change.kind != "modify":
            self.drop([fp])

    @property
    def state(self) -> str:
        """pending while files are left; then applied (if anything was) or rejected."""
        if self.files:
            return "pending"
        return "applied" if self.applied_any else "rejected"

    def to_dict(self) -> dict:
        """JSON-ready summary for status and events."""
        return {
            "runId": self.run_id,
            "summary": self.summary,
            "checksFailed": list(self.proposal.checks_failed),
            "state": self.state,
            "files": [{"path": f.change.path, "uri": f.uri, "kind": f.change.kind} for f in self.files],
        }


def checks_text(failed: list[str], limit: int = 70) -> str:
    """What failed checks say in a title ("checks failed: tests fail: ... (+1 more)"), '' when none failed."""
    if not failed:
        return ""
    first = " ".join(failed[0].split())
    first = first if len(first) <= limit else first[: limit - 3] + "..."
    return f"checks failed: {first}" + (f" (+{len(failed) - 1} more)" if len(failed) > 1 else "")


@dataclass(frozen=True)
class HunkSpot:
    """A hunk of a pending proposal located in the user's current text."""

    pending: PendingProposal
    file: FileProposal
    index: int
    range: types.Range


class ProposalStore:
    """All pending proposals, by run id."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingProposal] = {}

    def add(self, pending: PendingProposal) -> None:
        """Keep a run's proposal until the user decides."""
        self._pending[pending.run_id] = pending

    def get(self, run_id: str) -> PendingProposal | None:
        """The pending proposal of a run."""
        return self._pending.get(run_id)

    def remove(self, run_id: str) -> PendingProposal | None:
        """Forget a run's proposal."""
        return self._pending.pop(run_id, None)

    def prune(self, run_id: str) -> None:
        """Drop a proposal with no files left."""
        pending = self._pending.get(run_id)
        if pending is not None and not pending.files:
            del self._pending[run_id]

    def __iter__(self) -> Iterator[PendingProposal]:
        return iter(list(self._pending.values()))

    def uris(self) -> set[str]:
        """Every URI some pending proposal touches."""
        return {f.uri for p in self for f in p.files}

    def spots(self, uri: str, text: str, codec: PositionCodec) -> list[HunkSpot]:
        """The hunks touching `uri`, located in its current text (refused hunks have no spot)."""
        spots: list[HunkSpot] = []
        lines: Sequence[str] | None = None
        for pending in self:
            fp = pending.by_uri(uri)
            if fp is None:
                continue
            if fp.change.kind != "modify":
                whole = (
                    _whole_range(split_lines(text), codec) if lines is None else _whole_range(lines, codec)
                )
                spots.append(HunkSpot(pending, fp, -1, whole))
                continue
            rebased, refusals = fp.rebased(text)
            if lines is None:
                lines = split_lines(text)
            refused = {id(r.hunk) for r in refusals}
            moved = iter(rebased)
            for index, hunk in enumerate(fp.hunks):
                if id(hunk) in refused:
                    continue
                spots.append(HunkSpot(pending, fp, index, _visible_range(lines, next(moved), codec)))
        return spots

    def diagnostics(self, uri: str, state_of: StateReader, codec: PositionCodec) -> list[types.Diagnostic]:
        """Hint diagnostics on the changed ranges of one document."""
        fp_any = next((p.by_uri(uri) for p in self if p.by_uri(uri)), None)
        if fp_any is None:
            return []
        text = state_of(fp_any.abspath).text or ""
        out: list[types.Diagnostic] = []
        for spot in self.spots(uri, text, codec):
            kind = spot.file.change.kind
            what = {"create": "creates this file", "delete": "deletes this file"}.get(
                kind, "changes these lines"
            )
            out.append(
                types.Diagnostic(
                    range=spot.range,
                    message=f"lsp-agent {what}: {spot.pending.summary} (run {spot.pending.run_id}; "
                    "use the code actions to apply or reject)",
                    severity=types.DiagnosticSeverity.Hint,
                    source=DIAGNOSTIC_SOURCE,
                    code=spot.pending.run_id,
                    data={"runId": spot.pending.run_id, "hunk": spot.index, **_hunk_ref(spot)},
                )
            )
        return out


def _hunk_ref(spot: HunkSpot) -> dict[str, str]:
    """The stable hunk id for a hint's data (what lspAgent.rejectEdits/applyEdits take in "hunks")."""
    return {"hunkId": hunk_id(spot.file, spot.index)} if spot.index >= 0 else {}


def _reset(fp: FileProposal, change: FileChange) -> None:
    """Give a pending file a new base or new text and recompute its hunks."""
    fp.change = change
    fp.hunks = compute_hunks(change.base_text or "", change.new_text or "")
    fp._rebaser = None


def _whole_range(lines: Sequence[str], codec: PositionCodec) -> types.Range:
    """The first line of a document (where whole-file hints go)."""
    end = codec.client_num_units(lines[0].rstrip("\r\n")) if lines else 0
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=end))


def _visible_range(lines: Sequence[str], hunk: Hunk, codec: PositionCodec) -> types.Range:
    """Where a hunk shows: the lines it replaces, or the line it inserts at for a pure insertion."""
    rng = hunk_range(lines, hunk, codec)
    if hunk.start < hunk.end and rng.end.character == 0 and rng.end.line > rng.start.line:
        last = lines[hunk.end - 1].rstrip("\r\n")
        rng = types.Range(
            start=rng.start, end=types.Position(line=hunk.end - 1, character=codec.client_num_units(last))
        )
    elif hunk.start == hunk.end:
        line = min(hunk.start, max(len(lines) - 1, 0))
        width = codec.client_num_units(lines[line].rstrip("\r\n")) if lines else 0
        rng = types.Range(
            start=types.Position(line=line, character=0), end=types.Position(line=line, character=width)
        )
    return rng
