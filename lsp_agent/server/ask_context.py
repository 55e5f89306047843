"""The context of an editor ask: the selection, the @mentions and #diagnostics of its task; follow-up defaults."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from lsp_agent.agent.conversation.mentions import MentionSources, read_text_file, resolve_mentions
from lsp_agent.agent.events import AgentEvent

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.agent.events import EventSink
    from lsp_agent.config import Settings
    from lsp_agent.server.runs import AskRequest
    from lsp_agent.server.server import AgentServer
    from lsp_agent.workspace.folders import FolderAccess

log = logging.getLogger(__name__)


def follow_up(session: Session, request: AskRequest) -> AskRequest:
    """A follow-up continues the conversation: it needs an earlier exchange and defaults to that ask's file."""
    if not request.follow_up:
        return request
    last = session.last(include_retried=True)
    if last is None:
        raise ValueError(
            f"lspAgent.ask: nothing to follow up in conversation {session.id}: ask first "
            "(followUp continues a conversation that has at least one exchange)"
        )
    if request.uri is None and isinstance(last.request.get("uri"), str):
        return dataclasses.replace(request, uri=last.request["uri"])
    return request


async def ask_context(
    server: AgentServer,
    request: AskRequest,
    root: Path,
    index: Any,
    settings: Settings,
    sink: EventSink,
    folders: FolderAccess | None = None,
) -> str | None:
    """The editor context of a run: the file or selection, then what the task's mentions attach.

    Mentions that name nothing are reported (a `context` event and a warning) and the ask goes on without them.
    """
    selection = server.selection_context(request.uri, request.range, root)
    current = _current_file(request.uri, root)
    sources = _sources(server, request, root, index, settings, selection, current)
    if folders is not None:  # `@name/...` of another workspace folder the run may read
        from lsp_agent.workspace.redaction import redactor_for

        sources.folders = folders
        sources.redact_in = lambda other: redactor_for(settings, other).redact
    resolved = await asyncio.to_thread(resolve_mentions, request.task, sources)
    if resolved.attached or resolved.problems:
        sink(AgentEvent("context", "", resolved.to_event()))
    if resolved.problems:
        server.show_warning("lsp-agent: " + "; ".join(resolved.problems))
    parts = [p for p in (selection, *resolved.blocks) if p]
    return "\n\n".join(parts) or None


def _sources(
    server: AgentServer,
    request: AskRequest,
    root: Path,
    index: Any,
    settings: Settings,
    selection: str | None,
    current: str | None,
) -> MentionSources:
    """Where this server looks mentions up: open buffers before the disk, the folder's index, its secrets."""
    from lsp_agent.workspace.redaction import redactor_for
    from lsp_agent.workspace.secrets import secret_files_of

    max_size = settings.max_file_size

    def read_text(path: Path) -> str | None:
        doc = server.open_document(path)
        return doc.source if doc is not None else read_text_file(path, max_size)

    focus = request.range["start"]["line"] if request.range and request.diagnostics else None
    return MentionSources(
        root,
        read_text,
        index=index,
        is_secret=secret_files_of(settings).is_secret,
        redact=redactor_for(settings, root).redact,
        selection=selection if request.range else None,
        diagnostics=request.diagnostics,
        current_file=current,
        focus_line=focus,
    )


def _current_file(uri: str | None, root: Path) -> str | None:
    """The workspace-relative path of the ask's document."""
    fs_path = to_fs_path(uri) if uri else None
    if not fs_path:
        return None
    try:
        return Path(fs_path).absolute().relative_to(root).as_posix()
    except ValueError:
        return fs_path
