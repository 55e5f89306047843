"""Pending proposals -> LSP WorkspaceEdits: per-hunk TextEdits, versions, file operations, change annotations."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from lsp_agent.workspace.hunks import Hunk, Refusal, compute_hunks, split_lines
from lsp_agent.workspace.proposal import FileChange, Proposal
from lsp_agent.workspace.rebase import Rebaser


@dataclass(frozen=True)
class DocumentState:
    """What a file looks like to the user now: the open buffer (with its version) or the disk; None = absent."""

    text: str | None
    version: int | None = None


StateReader = Callable[[Path], DocumentState]


@dataclass(frozen=True)
class EditSupport:
    """What the client can take in a WorkspaceEdit."""

    document_changes: bool = False
    create: bool = False
    delete: bool = False
    annotations: bool = False

    @classmethod
    def from_capabilities(cls, caps: types.ClientCapabilities | None) -> EditSupport:
        """Read workspace.workspaceEdit of the client's capabilities."""
        edit = caps.workspace.workspace_edit if caps and caps.workspace else None
        if edit is None or not edit.document_changes:
            return cls()
        ops = {str(getattr(op, "value", op)) for op in (edit.resource_operations or [])}
        return cls(True, "create" in ops, "delete" in ops, edit.change_annotation_support is not None)


@dataclass
class FileProposal:
    """One file of a pending proposal, with its hunks against the text the agent read."""

    change: FileChange
    uri: str
    abspath: Path
    hunks: list[Hunk]
    _rebaser: Rebaser | None = field(default=None, repr=False)

    def rebased(self, current: str) -> tuple[list[Hunk], list[Refusal]]:
        """The hunks moved onto `current` (incremental from the last text seen: code actions must stay fast)."""
        assert self.change.base_text is not None
        if self._rebaser is None:
            self._rebaser = Rebaser(self.change.path, self.change.base_text, self.hunks)
        return self._rebaser.rebase(current)


def file_proposals(root: Path, proposal: Proposal) -> list[FileProposal]:
    """Split a proposal into per-file parts with precomputed hunks."""
    out: list[FileProposal] = []
    for change in proposal.changes:
        abspath = (root / change.path).absolute()
        hunks = (
            compute_hunks(change.base_text or "", change.new_text or "") if change.kind == "modify" else []
        )
        out.append(FileProposal(change, from_fs_path(str(abspath)) or abspath.as_uri(), abspath, hunks))
    return out


@dataclass
class EditPlan:
    """A WorkspaceEdit ready to send, plus what it covers and what was refused (with reasons)."""

    edit: types.WorkspaceEdit | None
    files: list[str]
    refused: list[str]
    # what the edit carries, per file: the proposal's own hunks, or None for a whole created/deleted file
    covers: list[tuple[FileProposal, list[Hunk] | None]] = field(default_factory=list)
    # the text each covered file had when the edit was built for it (None = absent), by absolute path
    texts: dict[Path, str | None] = field(default_factory=dict)


def position_at_line(lines: Sequence[str], index: int, codec: PositionCodec) -> types.Position:
    """The position of the start of line `index`; past the last line it is the end of the text."""
    if index < len(lines):
        return types.Position(line=index, character=0)
    if not lines or lines[-1].endswith(("\n", "\r")):
        return types.Position(line=len(lines), character=0)
    return types.Position(line=len(lines) - 1, character=codec.client_num_units(lines[-1]))


def hunk_range(lines: Sequence[str], hunk: Hunk, codec: PositionCodec) -> types.Range:
    """The range in the current text that `hunk` replaces."""
    return types.Range(
        start=position_at_line(lines, hunk.start, codec), end=position_at_line(lines, hunk.end, codec)
    )


def _text_edit(rng: types.Range, text: str, annotation: str | None) -> types.TextEdit:
    """A TextEdit, annotated when an annotation id is given."""
    if annotation:
        return types.AnnotatedTextEdit(range=rng, new_text=text, annotation_id=annotation)
    return types.TextEdit(range=rng, new_text=text)


def build_edit(
    files: Iterable[tuple[FileProposal, list[int] | None]],
    state_of: StateReader,
    support: EditSupport,
    codec: PositionCodec,
    *,
    annotation_id: str,
    label: str,
) -> EditPlan:
    """The WorkspaceEdit for the given files (each with the hunk indexes to include, None = all of them).

    Modified files are rebased onto the user's current text (open buffer or disk); hunks on lines the user changed
    are refused. Files created or deleted behind the agent's back are refused, never overwritten.
    """
    builder = _EditBuilder(support, codec, annotation_id if support.annotations else None)
    for fp, indexes in files:
        state = state_of(fp.abspath)
        if fp.change.kind == "create":
            builder.create(fp, state)
        elif fp.change.kind == "delete":
            builder.delete(fp, state)
        else:
            builder.modify(fp, state, indexes)
    return builder.plan(label)


@dataclass
class _EditBuilder:
    """Collects one WorkspaceEdit's parts file by file: what is covered, and what was refused and why."""

    support: EditSupport
    codec: PositionCodec
    annotation: str | None
    doc_changes: list = field(default_factory=list)
    changes: dict[str, list[types.TextEdit]] = field(default_factory=dict)
    covered: list[str] = field(default_factory=list)
    covers: list[tuple[FileProposal, list[Hunk] | None]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    texts: dict[Path, str | None] = field(default_factory=dict)

    def create(self, fp: FileProposal, state: DocumentState) -> None:
        """A file the agent created; refused when one of that name exists now."""
        path, text = fp.change.path, fp.change.new_text or ""
        if state.text is not None:
            self.refused.append(f"{path}: a file with that name exists now; the agent's new file was refused")
            return
        if self.support.document_changes:
            if not self.support.create:
                self.refused.append(f"{path}: the editor cannot create files through LSP edits; not created")
                return
            options = types.CreateFileOptions(overwrite=False, ignore_if_exists=False)
            self.doc_changes.append(
                types.CreateFile(uri=fp.uri, options=options, annotation_id=self.annotation)
            )
            if text:
                self.doc_changes.append(_document_edit(fp.uri, None, [_insert_all(text, self.annotation)]))
        else:
            self.changes[fp.uri] = [_insert_all(text, None)]
        self._cover(fp, None, state)

    def delete(self, fp: FileProposal, state: DocumentState) -> None:
        """A file the agent deleted; refused when it changed since the agent read it."""
        path = fp.change.path
        if state.text is None:
            self.refused.append(f"{path}: already deleted")
        elif state.text != fp.change.base_text:
            self.refused.append(f"{path}: changed after the agent read it; not deleted (your edits are kept)")
        elif not (self.support.document_changes and self.support.delete):
            self.refused.append(
                f"{path}: the editor cannot delete files through LSP edits; delete it yourself"
            )
        else:
            options = types.DeleteFileOptions(ignore_if_not_exists=False)
            self.doc_changes.append(
                types.DeleteFile(uri=fp.uri, options=options, annotation_id=self.annotation)
            )
            self._cover(fp, None, state)

    def modify(self, fp: FileProposal, state: DocumentState, indexes: list[int] | None) -> None:
        """A modified file's hunks (those at `indexes`), rebased onto the user's current text."""
        if state.text is None:
            self.refused.append(
                f"{fp.change.path}: was deleted after the agent read it; the change was refused"
            )
            return
        hunks, refusals = fp.rebased(state.text)
        pairs = _pair(fp.hunks, hunks, refusals)
        if indexes is not None:
            wanted = {fp.hunks[i] for i in indexes if 0 <= i < len(fp.hunks)}
            pairs = [(orig, h) for orig, h in pairs if orig in wanted]
            refusals = [r for r in refusals if r.hunk in wanted]
        hunks = [h for _, h in pairs if h is not None]
        self.refused.extend(r.message() for r in refusals)
        if not hunks:
            return
        lines = split_lines(state.text)
        edits = [_text_edit(hunk_range(lines, h, self.codec), h.new_text, self.annotation) for h in hunks]
        if self.support.document_changes:
            self.doc_changes.append(_document_edit(fp.uri, state.version, edits))
        else:
            self.changes[fp.uri] = edits
        self._cover(fp, [orig for orig, h in pairs if h is not None], state)

    def _cover(self, fp: FileProposal, hunks: list[Hunk] | None, state: DocumentState) -> None:
        """Note a file the edit carries: its hunks (None = the whole file) and the text it was built on."""
        self.covered.append(fp.change.path)
        self.covers.append((fp, hunks))
        self.texts[fp.abspath] = state.text

    def plan(self, label: str) -> EditPlan:
        """The EditPlan: no edit when nothing is covered."""
        if not self.covered:
            return EditPlan(None, [], self.refused)
        if not self.support.document_changes:
            edit = types.WorkspaceEdit(changes=self.changes)
        else:
            edit = types.WorkspaceEdit(document_changes=self.doc_changes)
            if self.annotation:
                note = types.ChangeAnnotation(label=label, needs_confirmation=True, description=label)
                edit.change_annotations = {self.annotation: note}
        return EditPlan(edit, self.covered, self.refused, self.covers, self.texts)


def _pair(
    original: list[Hunk], rebased: list[Hunk], refusals: list[Refusal]
) -> list[tuple[Hunk, Hunk | None]]:
    """Pair each original hunk with its rebased form (None when refused); order is preserved by the rebase."""
    refused = {id(r.hunk) for r in refusals}
    moved = iter(rebased)
    return [(h, None if id(h) in refused else next(moved)) for h in original]


def _insert_all(text: str, annotation: str | None) -> types.TextEdit:
    """Insert the whole text at the top of an empty document."""
    origin = types.Position(line=0, character=0)
    return _text_edit(types.Range(start=origin, end=origin), text, annotation)


def _document_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.TextDocumentEdit:
    """A TextDocumentEdit against a given version (None = whatever is on disk)."""
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits
    )
