"""lspAgent.undoApply: revert the last applied proposal (lspAgent.applyEdits or an "Apply" code action), exactly.

Before lspAgent.applyEdits sends its WorkspaceEdit, the text of every file it touches is kept (`snapshot`); once the
client reports it applied, the text each file must now hold is computed from that edit (`remember`). A code action
carries its edit to the client, so the server notes the text before and the edit of each one it offers (`offer`)
and, when the document text later shows the change applied, recognises it by the text the edit leaves, worked out
then (`remember_found`), not on every codeAction request. Undo sends one
WorkspaceEdit restoring every file's pre-apply text, but only when each file still holds exactly what the apply
left: a file the user changed since makes undo refuse with a message, and nothing is changed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from lsp_agent.server.documents import LineDocument
from lsp_agent.server.edits import EditPlan
from lsp_agent.workspace.applied import AppliedFile, drift_since_apply
from lsp_agent.workspace.apply_journal import record_apply

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer


log = logging.getLogger(__name__)
MAX_OFFERED = 64  # code-action edits remembered (the newest ones) to recognise an applied one


class UndoRefused(Exception):
    """Undo cannot restore the files (nothing applied, or a file changed since); nothing was changed."""


@dataclass
class UndoFile:
    """One file of an apply: its uri and path, and its exact text before and after (None = absent)."""

    uri: str
    path: str
    abspath: Path
    before: str | None
    after: str | None = None
    new_dirs: list[Path] = field(
        default_factory=list
    )  # absent before the apply: undo removes them when empty


@dataclass
class LastApply:
    """What the last lspAgent.applyEdits changed, per file."""

    run_id: str
    session_id: str | None
    files: list[UndoFile]
    root: Path | None = None  # the workspace folder of the run (its apply journal, for lspAgent.rewind)


def snapshot(server: AgentServer, plan: EditPlan) -> list[UndoFile]:
    """The text of every file a plan touches, as the plan was built on it (no second read of a closed file)."""
    files = []
    for fp, _ in plan.covers:
        item = UndoFile(fp.uri, fp.change.path, fp.abspath, plan.texts[fp.abspath])
        if fp.change.kind == "create":
            item.new_dirs = _absent_parents(fp.abspath)
        files.append(item)
    return files


def _absent_parents(path: Path) -> list[Path]:
    """The parent directories of `path` that do not exist yet (creating the file creates them), deepest first."""
    absent = []
    parent = path.parent
    while parent != parent.parent and not parent.exists():
        absent.append(parent)
        parent = parent.parent
    return absent


def remember(
    server: AgentServer,
    run_id: str,
    session_id: str | None,
    plan: EditPlan,
    files: list[UndoFile],
    root: Path | None = None,
) -> None:
    """Keep the applied plan as the server's last apply, with the text each file holds after it (and journal it)."""
    _fill_after(server, plan, files)
    server.last_apply = LastApply(run_id, session_id, files, root)
    journal(root, run_id, files)


def journal(root: Path | None, run_id: str, files: list[UndoFile], *, undone: bool = False) -> None:
    """Add an apply (or its undo, the apply reversed) to the folder's apply journal; a failure is only logged."""
    if root is None:
        return
    if undone:
        applied = [AppliedFile(f.path, f.after, f.before) for f in files]
        dirs: list[str] = []
    else:
        applied = [AppliedFile(f.path, f.before, f.after) for f in files]
        dirs = [d.relative_to(root).as_posix() for f in files for d in f.new_dirs if d.is_relative_to(root)]
    try:
        record_apply(root, run_id, applied, dirs)
    except OSError as exc:
        log.warning(
            "the apply of run %s was not journaled (lspAgent.rewind cannot restore it): %s", run_id, exc
        )


def offer(server: AgentServer, plan: EditPlan) -> None:
    """Note a code action's edit: if the user applies it, the text it leaves maps back to the text before it.

    Runs for every codeAction request (editors ask on each cursor move), so it only notes the text and the edit;
    the text after the edit is worked out when an applied change is found (`remember_found`).
    """
    offered: dict[tuple[Any, ...], OfferedEdit] = server.offered_edits
    for edit in _offered_edits(server, plan, snapshot(server, plan)):
        key = (edit.file.uri, edit.file.before, edit.file.after, edit.spans)
        offered.pop(key, None)
        offered[key] = edit
    while len(offered) > MAX_OFFERED:
        offered.pop(next(iter(offered)))


def remember_found(
    server: AgentServer, run_id: str, session_id: str | None, found: list[Any], root: Path | None = None
) -> None:
    """After changes were found applied in the text (a code action): the last apply, when each came from an offer."""
    files = []
    for fp in found:
        now = server.document_state(fp.abspath).text
        offered = _offer_leaving(server, fp.uri, now)
        if offered is None:
            return  # applied some other way (typed, or an older offer): not undoable as one step
        files.append(UndoFile(fp.uri, fp.change.path, fp.abspath, offered.before, now, offered.new_dirs))
    if files:
        server.last_apply = LastApply(run_id, session_id, files, root)
        journal(root, run_id, files)


def _offer_leaving(server: AgentServer, uri: str, text: str | None) -> UndoFile | None:
    """The newest offered edit of `uri` that leaves exactly `text`."""
    for edit in reversed(server.offered_edits.values()):
        if edit.file.uri == uri and edit.after() == text:
            return edit.file
    return None


Span = tuple[int, int, int, int, str]  # a TextEdit as (start line, start char, end line, end char, new text)


@dataclass
class OfferedEdit:
    """One file of an edit: its text before, and for a modified file the edit, applied only when asked."""

    file: UndoFile
    spans: tuple[Span, ...] | None  # None once file.after is known (always for created and deleted files)
    encoding: str

    def after(self) -> str | None:
        """The text the file holds once the edit is applied (worked out on first use)."""
        if self.spans is not None:
            self.file.after = _text_after(self.file.before or "", self.spans, self.encoding)
            self.spans = None
        return self.file.after


def _fill_after(server: AgentServer, plan: EditPlan, files: list[UndoFile]) -> None:
    """The text each file holds once the plan's edit is applied to its snapshot."""
    for edit in _offered_edits(server, plan, files):
        edit.after()


def _offered_edits(server: AgentServer, plan: EditPlan, files: list[UndoFile]) -> list[OfferedEdit]:
    """Each file's part of a plan's edit; a created or deleted file's after-text is set at once."""
    edits = _text_edits_by_uri(plan.edit)
    encoding = server.workspace.position_codec.encoding
    out = []
    for item, (fp, _) in zip(files, plan.covers, strict=True):
        spans = None
        if fp.change.kind == "delete":
            item.after = None
        elif fp.change.kind == "create":
            item.after = fp.change.new_text or ""
        else:
            spans = tuple(sorted(map(_span, edits.get(item.uri, [])), key=lambda s: s[:2], reverse=True))
        out.append(OfferedEdit(item, spans, encoding))
    return out


def _span(edit: types.TextEdit) -> Span:
    rng = edit.range
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character, edit.new_text)


def _text_after(before: str, spans: tuple[Span, ...], encoding: str) -> str:
    """`before` with the edits applied (last first), positions in the client's units.

    LineDocument splices only the lines an edit touches and gives the same text as pygls' TextDocument, which
    rewrites every line per edit (~3 ms for a 5,000-line file).
    """
    doc = LineDocument("file:///undo-offer", source=before, position_codec=PositionCodec(encoding))
    for start_line, start_char, end_line, end_char, new_text in spans:
        rng = types.Range(
            start=types.Position(line=start_line, character=start_char),
            end=types.Position(line=end_line, character=end_char),
        )
        doc.apply_change(types.TextDocumentContentChangePartial(range=rng, text=new_text))
    return doc.source


def _text_edits_by_uri(edit: types.WorkspaceEdit | None) -> dict[str, list[types.TextEdit]]:
    """The text edits of a WorkspaceEdit, per document (from `changes` or `documentChanges`)."""
    out: dict[str, list[types.TextEdit]] = {}
    if edit is None:
        return out
    for uri, edits in (edit.changes or {}).items():
        out.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            out.setdefault(change.text_document.uri, []).extend(change.edits)  # type: ignore[arg-type]
    return out


def _refusals(server: AgentServer, last: LastApply) -> list[str]:
    """Why each file cannot be restored now."""
    drifts = (drift_since_apply(i.path, server.document_state(i.abspath).text, i.after) for i in last.files)
    return [problem for problem in drifts if problem is not None]


def undo_edit(server: AgentServer, last: LastApply) -> types.WorkspaceEdit:
    """The WorkspaceEdit restoring every file of the last apply; UndoRefused when a file changed since."""
    problems = _refusals(server, last)
    support = server.edit_support()
    for item in last.files:
        if item.before is None and not (support.document_changes and support.delete):
            problems.append(
                f"{item.path}: the editor cannot delete files through LSP edits; delete it yourself"
            )
    if problems:
        raise UndoRefused(f"undo refused, nothing was changed: {'; '.join(problems)}")
    doc_changes: list[Any] = []
    changes: dict[str, list[types.TextEdit]] = {}
    for item in last.files:
        state = server.document_state(item.abspath)
        if item.before is None:
            doc_changes.append(types.DeleteFile(uri=item.uri))
            continue
        if item.after is None and support.document_changes:
            doc_changes.append(types.CreateFile(uri=item.uri))
        edit = types.TextEdit(range=_whole(item.after or "", server), new_text=item.before)
        if support.document_changes:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=item.uri, version=state.version)
            doc_changes.append(types.TextDocumentEdit(text_document=identifier, edits=[edit]))
        else:
            changes[item.uri] = [edit]
    if support.document_changes:
        return types.WorkspaceEdit(document_changes=doc_changes)
    return types.WorkspaceEdit(changes=changes)


def _remove_new_dirs(server: AgentServer, last: LastApply) -> None:
    """After the undo deleted the files the apply created: remove the directories it created that are empty now.

    Only directories inside a workspace folder that did not exist before the apply; one holding anything stays.
    """
    roots = [r.resolve() for r in server.workspace_roots()]
    dirs = {d for item in last.files if item.before is None for d in item.new_dirs}
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        inside = any(directory.resolve().is_relative_to(r) and directory.resolve() != r for r in roots)
        if not inside or directory.is_symlink() or not directory.is_dir():
            continue
        try:
            directory.rmdir()  # refuses a directory that is not empty
        except OSError:
            continue


def _whole(text: str, server: AgentServer) -> types.Range:
    """The range of a whole text, in the client's position units."""
    lines = text.splitlines(keepends=True)
    origin = types.Position(line=0, character=0)
    if not lines:
        return types.Range(start=origin, end=origin)
    if lines[-1].endswith(("\n", "\r")):
        return types.Range(start=origin, end=types.Position(line=len(lines), character=0))
    width = server.workspace.position_codec.client_num_units(lines[-1])
    return types.Range(start=origin, end=types.Position(line=len(lines) - 1, character=width))


async def undo_last_apply(server: AgentServer) -> dict[str, Any]:
    """Restore the text every file had before the last apply (settle a code action applied just now first)."""
    last: LastApply | None = server.last_apply
    if last is None:
        raise UndoRefused("lspAgent.undoApply: nothing to undo (no edits were applied, or they were undone)")
    edit = undo_edit(server, last)
    response = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=f"lsp-agent: undo run {last.run_id}")
    )
    paths = [item.path for item in last.files]
    if not response.applied:
        reason = response.failure_reason or "the editor did not apply the edit"
        raise UndoRefused(f"lspAgent.undoApply: the editor refused the undo ({reason}); nothing was changed")
    server.last_apply = None
    journal(last.root, last.run_id, last.files, undone=True)
    _remove_new_dirs(server, last)
    note = f"user undid the applied changes of run {last.run_id}: {', '.join(paths)}"
    if last.session_id:
        server.session(last.session_id).record(note)
    server.log_line(f"[run {last.run_id}] {note}")
    server.protocol.notify("lspAgent/event", {"runId": last.run_id, "kind": "undo", "files": paths})
    return {"runId": last.run_id, "undone": True, "files": paths}
