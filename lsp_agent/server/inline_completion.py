"""textDocument/inlineCompletion (LSP 3.18): suggestions as the user types, from the completion engine.

Every way a request can fail ends it quietly with no items: the model down (said once by the engine), a newer
keystroke, the document changed while the model wrote, a bad position. `$/cancelRequest` cancels the handler's
task, which cancels the model request and closes its stream.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_agent.completion.engine import CompletionEngine, CompletionRequest

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)


def attach_completion_engine(server: AgentServer) -> CompletionEngine:
    """Give the server its completion engine (`server.completions`) and its status row."""

    def say(message: str, loud: bool) -> None:
        if loud:
            server.show_warning(message)
        else:
            server.log_line(message)

    def index_for(path: Path) -> object | None:
        folder = server.indexes.folder_for(path)
        return folder.index if folder is not None else None

    engine = CompletionEngine(lambda: server.settings, index_for, server.open_buffers, say)
    server.completions = engine  # type: ignore[attr-defined]
    server.status_providers["completion"] = engine.status
    return engine


async def inline_completion(
    ls: AgentServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList | None:
    """textDocument/inlineCompletion: the engine's suggestion at the cursor, or None."""
    engine: CompletionEngine | None = getattr(ls, "completions", None)
    if engine is None:
        return None
    return await _complete(ls, engine, params)


async def _complete(
    ls: AgentServer, engine: CompletionEngine, params: types.InlineCompletionParams
) -> types.InlineCompletionList | None:
    uri = params.text_document.uri
    doc = ls.workspace.text_documents.get(uri)
    fs_path = to_fs_path(uri)
    if doc is None or not fs_path or params.position.line > len(doc.lines):
        return None
    version, text = doc.version, doc.source
    offset = doc.offset_at_position(params.position)
    replaced = types.Range(params.position, params.position)  # what the item replaces
    selected = params.context.selected_completion_info
    if selected is not None:  # the suggestion continues the completion item selected in the menu
        start, end = doc.offset_at_position(selected.range.start), doc.offset_at_position(selected.range.end)
        text, offset = text[:start] + selected.text + text[end:], start + len(selected.text)
        replaced = types.Range(selected.range.start, params.position)
    before = text[:offset]
    line = before.count("\n")
    path = Path(fs_path).absolute()
    folder = ls.indexes.folder_for(path)
    request = CompletionRequest(
        key=uri,
        path=path,
        root=folder.root if folder is not None else ls.primary_root,
        text=text,
        line=line,
        character=offset - (before.rfind("\n") + 1),
        invoked=params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked,
    )
    await ls.settings_ready.wait()
    try:
        suggestion = await engine.complete(request)
    except Exception:  # a bug here must not become an error popup per keystroke
        log.exception("inline completion failed")
        return None
    current = ls.workspace.text_documents.get(uri)
    if suggestion is None or current is None or current.version != version:
        return None  # the document changed while the model wrote: the suggestion belongs to older text
    insert = (selected.text if selected is not None else "") + suggestion.text
    return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=insert, range=replaced)])


def note_changes(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
    """didChange: the engine drops the request in flight for the document and remembers the edited lines."""
    engine: CompletionEngine | None = getattr(ls, "completions", None)
    if engine is None:
        return
    fs_path = to_fs_path(params.text_document.uri)
    path = Path(fs_path).absolute() if fs_path else None
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start, end = change.range.start.line, change.range.end.line
            engine.note_change(params.text_document.uri, path, start, end, change.text.count("\n"))
        else:
            engine.note_change(params.text_document.uri, None, 0, 0, 0)


def forget_document(ls: AgentServer, uri: str) -> None:
    """didClose: the engine drops what it kept about the document."""
    engine: CompletionEngine | None = getattr(ls, "completions", None)
    if engine is not None:
        fs_path = to_fs_path(uri)
        engine.forget(uri, Path(fs_path).absolute() if fs_path else None)
