"""LSP handlers: lifecycle, settings, document sync into the index, code actions, commands, progress cancel."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from lsp_agent.config_files import workspace_config_file
from lsp_agent.server.alternatives import ALTERNATIVE_COMMANDS
from lsp_agent.server.client_requests import request_within
from lsp_agent.server.code_actions import code_actions
from lsp_agent.server.commands import COMMANDS, CommandError
from lsp_agent.server.conversation_commands import CONVERSATION_COMMANDS
from lsp_agent.server.inline_completion import forget_document, note_changes, register_inline_completion
from lsp_agent.server.rewind import REWIND_COMMANDS
from lsp_agent.server.runs import load_agent_core
from lsp_agent.server.server import SECTION, AgentServer

log = logging.getLogger(__name__)

HINT_DEBOUNCE_SECONDS = 0.2
WATCH_REGISTRATION_ID = "lsp-agent/watched-files"
BULK_FILE_EVENTS = 200


def _path(uri: str) -> Path | None:
    """The absolute filesystem path of a file URI (None for other schemes)."""
    fs = to_fs_path(uri)
    return Path(fs).absolute() if fs else None


def create_server() -> AgentServer:
    """The server with every handler registered (importing nothing heavy)."""
    server = AgentServer()
    _register_lifecycle(server)
    _register_documents(server)
    _register_actions(server)
    _register_commands(server)
    register_inline_completion(server)
    return server


# ----- lifecycle and settings ---------------------------------------------------------------------------------


def _register_lifecycle(server: AgentServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        ls.init_options = dict(options) if isinstance(options, dict) else {}

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
        ls.indexes.set_folders(ls.workspace_roots())
        if ls.supports_configuration():
            ls.reload_settings(show=False)  # usable at once; the pulled configuration refines it below
        await asyncio.gather(_pull_configuration(ls), ls.attach_plugins())
        ls.reload_settings()
        ls.settings_ready.set()
        await _watch_files(ls)
        ls.indexes.reindex()
        _prewarm_model_library(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            ls.client_config = dict(settings[SECTION])
        else:
            await _pull_configuration(ls)
        before = _index_key(ls)
        ls.reload_settings()
        if _index_key(ls) != before:
            ls.indexes.reindex()
        _prewarm_model_library(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: AgentServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.indexes.set_folders(ls.workspace_roots())
        ls.indexes.reindex()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: AgentServer, params: types.WorkDoneProgressCancelParams) -> None:
        handler = ls.progress_cancel_handlers.get(params.token)
        if handler is not None:
            handler()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: AgentServer, params: Any) -> None:
        ls.runs.cancel_all()
        ls.indexes.close()
        if ls.mcp is not None:
            ls.mcp.close()


def _index_key(ls: AgentServer) -> tuple:
    """The settings whose change means reindexing."""
    from lsp_agent.server.indexing import index_config_key

    return index_config_key(ls.settings)


async def _pull_configuration(ls: AgentServer) -> None:
    """workspace/configuration for the `lspAgent` section, when the client supports it."""
    if not ls.supports_configuration():
        return
    try:
        result = await request_within(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            ),
            5,
        )
    except Exception as exc:
        log.info("workspace/configuration failed: %s", exc)
        return
    if result and isinstance(result[0], dict):
        ls.client_config = dict(result[0])


async def _watch_files(ls: AgentServer) -> None:
    """Register workspace/didChangeWatchedFiles dynamically when the client allows it."""
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
    )
    registration = types.Registration(
        id=WATCH_REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await request_within(
            ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 5
        )
    except Exception as exc:
        log.info("registering file watchers failed: %s", exc)


_prewarm_started = threading.Event()


def _prewarm_model_library(ls: AgentServer) -> None:
    """Import litellm in a daemon thread once a model is configured, so the first ask does not wait ~5 s."""
    if not ls.settings.model or _prewarm_started.is_set() or os.environ.get("LSP_AGENT_NO_PREWARM"):
        return
    _prewarm_started.set()

    def warm() -> None:
        try:
            load_agent_core()
        except Exception:
            log.exception("pre-importing the agent core failed")

    threading.Thread(target=warm, name="lsp-agent-prewarm", daemon=True).start()


# ----- documents ----------------------------------------------------------------------------------------------


def _register_documents(server: AgentServer) -> None:
    """Document sync: the index follows open buffers and the disk; proposal hints follow edits."""
    hint_timer: dict[str, asyncio.TimerHandle] = {}

    def hints_soon(ls: AgentServer, uri: str) -> None:
        if uri not in ls.proposals.uris():
            return
        timer = hint_timer.pop("all", None)
        if timer is not None:
            timer.cancel()
        hint_timer["all"] = asyncio.get_running_loop().call_later(HINT_DEBOUNCE_SECONDS, ls.publish_hints)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.indexes.update_soon(path, params.text_document.text)
            ls.next_edits.opened(params.text_document.uri, params.text_document.text)
        if params.text_document.uri in ls.proposals.uris():
            ls.publish_hints()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = _path(uri)
        if path is not None:
            doc = ls.workspace.text_documents.get(uri)
            ls.indexes.schedule_update(path, lambda: doc.source if doc is not None else None)
            ls.next_edits.changed(uri)
        note_changes(ls, params)  # the completion in flight is stale; the edited lines are recent context
        hints_soon(ls, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
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

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.indexes.update_from_disk(path)  # unsaved changes were discarded: the disk is the truth again
            ls.next_edits.closed(params.text_document.uri)
        forget_document(ls, params.text_document.uri)
        if params.text_document.uri in ls.diagnosed_uris:
            ls.publish_hints()

    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(_watched_files_changed)


def _watched_files_changed(ls: AgentServer, params: types.DidChangeWatchedFilesParams) -> None:
    """Files changed outside the editor: the index follows the disk (an open buffer is followed instead); a
    changed workspace config file or .env reloads the settings."""
    root = ls.primary_root
    if root is not None:
        settings_files = {workspace_config_file(root).absolute(), (Path(root) / ".env").absolute()}
        if any(_path(change.uri) in settings_files for change in params.changes):
            before = _index_key(ls)
            ls.reload_settings()
            if _index_key(ls) != before:
                ls.indexes.reindex()
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


def _register_actions(server: AgentServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor],
            resolve_provider=False,
        ),
    )
    def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            return code_actions(ls, params)
        except Exception:  # a broken action must not break the editor's lightbulb
            log.exception("code actions failed")
            return []


# ----- commands -----------------------------------------------------------------------------------------------


def _register_commands(server: AgentServer) -> None:
    for name, handler in {
        **COMMANDS,
        **CONVERSATION_COMMANDS,
        **REWIND_COMMANDS,
        **ALTERNATIVE_COMMANDS,
    }.items():
        server.command(name)(_wrap(name, handler))


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
