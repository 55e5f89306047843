"""The LSP handlers, short `(ls, params)` functions, and `create_server()`, the one place that registers them
with the server object (lifecycle, settings, document sync, code actions, inline completion, commands)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from lsp_agent.config_files import workspace_config_file
from lsp_agent.server.alternatives import ALTERNATIVE_COMMANDS
from lsp_agent.server.code_actions import code_actions
from lsp_agent.server.command_args import CommandError
from lsp_agent.server.commands import COMMANDS
from lsp_agent.server.conversation_commands import CONVERSATION_COMMANDS
from lsp_agent.server.inline_completion import (
    attach_completion_engine,
    forget_document,
    inline_completion,
    note_changes,
)
from lsp_agent.server.lifecycle import (
    prewarm_model_library,
    pull_configuration,
    reload_settings_and_index,
    watch_files,
)
from lsp_agent.server.rewind import REWIND_COMMANDS
from lsp_agent.server.server import SECTION, AgentServer

log = logging.getLogger(__name__)

BULK_FILE_EVENTS = 200


def _path(uri: str) -> Path | None:
    """The absolute filesystem path of a file URI (None for other schemes)."""
    fs = to_fs_path(uri)
    return Path(fs).absolute() if fs else None


# ----- lifecycle and settings ---------------------------------------------------------------------------------


def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
    """Keep the initialization options (editor settings given at start)."""
    options = params.initialization_options
    ls.init_options = dict(options) if isinstance(options, dict) else {}


async def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
    """Read every settings source, load the plugins, watch files, index the folders."""
    ls.indexes.set_folders(ls.workspace_roots())
    if ls.supports_configuration():
        ls.reload_settings(show=False)  # usable at once; the pulled configuration refines it below
    await asyncio.gather(pull_configuration(ls), ls.attach_plugins())
    ls.reload_settings()
    ls.settings_ready.set()
    await watch_files(ls)
    ls.indexes.reindex()
    prewarm_model_library(ls)


async def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
    """New editor settings: pushed in the notification, else pulled."""
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
        ls.client_config = dict(settings[SECTION])
    else:
        await pull_configuration(ls)
    reload_settings_and_index(ls)
    prewarm_model_library(ls)


def did_change_folders(ls: AgentServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """Workspace folders added or removed: the indexes follow."""
    ls.indexes.set_folders(ls.workspace_roots())
    ls.indexes.reindex()


def progress_cancel(ls: AgentServer, params: types.WorkDoneProgressCancelParams) -> None:
    """The user cancelled a progress bar: stop what it shows (a run, an indexing)."""
    handler = ls.progress_cancel_handlers.get(params.token)
    if handler is not None:
        handler()


def shutdown(ls: AgentServer, params: Any) -> None:
    """Stop the runs, close the indexes and the MCP servers."""
    ls.runs.cancel_all()
    ls.indexes.close()
    if ls.mcp is not None:
        ls.mcp.close()


# ----- documents: the index follows open buffers and the disk; proposal hints follow edits ---------------------


def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
    """A document opened: index its text, note it for next edits, show its hints."""
    path = _path(params.text_document.uri)
    if path is not None:
        ls.indexes.update_soon(path, params.text_document.text)
        ls.next_edits.opened(params.text_document.uri, params.text_document.text)
    if params.text_document.uri in ls.proposals.uris():
        ls.publish_hints()


def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
    """A document edited: reindex it soon, look for next edits, refresh completions and hints."""
    uri = params.text_document.uri
    path = _path(uri)
    if path is not None:
        doc = ls.workspace.text_documents.get(uri)
        ls.indexes.schedule_update(path, lambda: doc.source if doc is not None else None)
        ls.next_edits.changed(uri)
    note_changes(ls, params)  # the completion in flight is stale; the edited lines are recent context
    ls.publish_hints_soon(uri)


def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
    """A document saved: index the saved text."""
    uri = params.text_document.uri
    path = _path(uri)
    doc = ls.workspace.text_documents.get(uri)
    if path is not None:
        text = params.text if params.text is not None else (doc.source if doc is not None else None)
        if text is None:
            ls.indexes.update_from_disk(path)
        else:
            ls.indexes.update_soon(path, text)
        ls.next_edits.saved(uri)


def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
    """A document closed: the disk is the truth again; forget its completions and hints."""
    path = _path(params.text_document.uri)
    if path is not None:
        ls.indexes.update_from_disk(path)  # unsaved changes were discarded
        ls.next_edits.closed(params.text_document.uri)
    forget_document(ls, params.text_document.uri)
    if params.text_document.uri in ls.diagnosed_uris:
        ls.publish_hints()


def watched_files_changed(ls: AgentServer, params: types.DidChangeWatchedFilesParams) -> None:
    """Files changed outside the editor: the index follows the disk (an open buffer is followed instead); a
    changed workspace config file or .env reloads the settings."""
    root = ls.primary_root
    if root is not None:
        settings_files = {workspace_config_file(root).absolute(), (Path(root) / ".env").absolute()}
        if any(_path(change.uri) in settings_files for change in params.changes):
            reload_settings_and_index(ls)
    if len(params.changes) > BULK_FILE_EVENTS:  # a checkout or a build: one incremental refresh is cheaper
        ls.indexes.reindex()
        return
    for change in params.changes:
        if change.uri in ls.workspace.text_documents:
            continue  # the open buffer is what the index follows
        path = _path(change.uri)
        if path is None:
            continue
        if change.type == types.FileChangeType.Deleted:
            ls.indexes.update_soon(path, None)
        else:
            ls.indexes.update_from_disk(path)


# ----- code actions -------------------------------------------------------------------------------------------


def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The Apply/Reject/next-edit actions at a range; none when building them fails."""
    try:
        return code_actions(ls, params)
    except Exception:  # a broken action must not break the editor's lightbulb
        log.exception("code actions failed")
        return []


CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor], resolve_provider=False
)

# method -> (handler, registration options)
FEATURES: dict[str, tuple[Callable[..., Any], Any]] = {
    types.INITIALIZE: (initialize, None),
    types.INITIALIZED: (initialized, None),
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: (did_change_configuration, None),
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: (did_change_folders, None),
    types.WINDOW_WORK_DONE_PROGRESS_CANCEL: (progress_cancel, None),
    types.SHUTDOWN: (shutdown, None),
    types.TEXT_DOCUMENT_DID_OPEN: (did_open, None),
    types.TEXT_DOCUMENT_DID_CHANGE: (did_change, None),
    types.TEXT_DOCUMENT_DID_SAVE: (did_save, None),
    types.TEXT_DOCUMENT_DID_CLOSE: (did_close, None),
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: (watched_files_changed, None),
    types.TEXT_DOCUMENT_CODE_ACTION: (code_action, CODE_ACTION_OPTIONS),
    types.TEXT_DOCUMENT_INLINE_COMPLETION: (inline_completion, types.InlineCompletionOptions()),
}


def create_server() -> AgentServer:
    """The server with every handler registered (importing nothing heavy)."""
    server = AgentServer()
    attach_completion_engine(server)
    for method, (handler, options) in FEATURES.items():
        server.feature(method, options)(handler)
    for name, command in {
        **COMMANDS,
        **CONVERSATION_COMMANDS,
        **REWIND_COMMANDS,
        **ALTERNATIVE_COMMANDS,
    }.items():
        server.command(name)(_wrap(name, command))
    return server


def _wrap(name: str, handler: Any) -> Any:
    """Adapt a command handler: raw arguments in, CommandError -> an InvalidParams error with its message."""
    if inspect.iscoroutinefunction(handler):

        async def run_async(ls: AgentServer, *args: Any) -> Any:
            try:
                return await handler(ls, args)
            except CommandError as exc:
                raise JsonRpcInvalidParams(message=str(exc)) from None

        run_async.__name__ = name.replace(".", "_")
        return run_async

    def run(ls: AgentServer, *args: Any) -> Any:
        try:
            return handler(ls, args)
        except CommandError as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None

    run.__name__ = name.replace(".", "_")
    return run
