"""The ACP agent: initialize, authenticate, sessions (new, load, resume, fork, list, close, delete, modes, config
options), prompts, cancellation; one run assembly underneath."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, helpers
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from lsp_agent import __version__
from lsp_agent.acp import auth, fork, session_methods
from lsp_agent.acp.commands import run_command, slash_command
from lsp_agent.acp.config_options import config_options, session_settings
from lsp_agent.acp.files import ClientFiles
from lsp_agent.acp.mcp_commands import prompt_commands
from lsp_agent.acp.permissions import DEFAULT_TIMEOUT, EditConsent, PermissionRequests
from lsp_agent.acp.read_folders import ReadFolderIndexes, read_folder_router, requested_directories
from lsp_agent.acp.sdk_routes import add_missing_routes
from lsp_agent.acp.session_list import SessionLister
from lsp_agent.acp.sessions import DEFAULT_MODE, MODES, AcpSession, SessionStore, default_store, mode_state
from lsp_agent.acp.turns import run_turn
from lsp_agent.acp.workspace import IndexPool, checked_folder, mcp_manager
from lsp_agent.agent.consent.store import PermissionStore
from lsp_agent.agent.conversation.session import Session
from lsp_agent.config import ModelNotConfigured, Settings
from lsp_agent.settings_sources import load_settings

log = logging.getLogger(__name__)

CANCEL_GRACE_SECONDS = 0.8  # after session/cancel, a run that has not stopped by itself is stopped hard
INVALID_PARAMS, INVALID_REQUEST, INTERNAL_ERROR = -32602, -32600, -32603


class LspAgentAcp:
    """An ACP Agent (acp.interfaces.Agent) over lsp-agent's run assembly."""

    def __init__(
        self,
        flags: dict[str, Any] | None = None,
        *,
        store: SessionStore | None = None,
        permission_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.flags = {k: v for k, v in (flags or {}).items() if v is not None}
        self.store = store or default_store()
        self.permission_timeout = permission_timeout
        self.conn: Any = None
        self.client_caps = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.indexes = IndexPool()
        self.read_indexes = ReadFolderIndexes()
        self.lister = SessionLister(self.store.directory)
        self.model_warmup: asyncio.Future | None = None  # litellm imported at the first session

    def on_connect(self, conn: Any) -> None:
        """Keep the connection to the client (for session/update, request_permission and fs/*)."""
        self.conn = conn
        add_missing_routes(conn, self)

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Agree on the protocol version (ours when the client's is newer) and say what this agent supports."""
        self.client_caps = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=False, audio=False),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities(),
                    fork=SessionForkCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="lsp-agent", title="lsp-agent", version=__version__),
            auth_methods=auth.auth_methods(
                terminal=bool(self.client_caps.auth and self.client_caps.auth.terminal)
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """Keep the API key the client put in the environment (see acp/auth.py); runs use it from then on."""
        try:
            await asyncio.to_thread(auth.authenticate, method_id)
        except ValueError as exc:
            raise RequestError(INVALID_PARAMS, str(exc)) from None
        except OSError as exc:
            raise RequestError(INTERNAL_ERROR, f"could not store the API key: {exc}") from None

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A session in the folder `cwd` (absolute, an existing readable directory), reading the additional ones."""
        root = checked_folder(cwd)
        reads = requested_directories(additional_directories, root)
        session = self._open(uuid.uuid4().hex, root, mcp_servers or [], reads=reads)
        self.store.save(session)
        options = self._start(session)
        return NewSessionResponse(
            session_id=session.id, modes=mode_state(session.mode), config_options=options
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Restore a stored session and replay its history as session/update notifications."""
        session = self._restore(cwd, session_id, mcp_servers, additional_directories)
        for update in session.replay():
            await self.conn.session_update(session_id=session.id, update=update)
        options = self._start(session)
        return LoadSessionResponse(modes=mode_state(session.mode), config_options=options)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Restore a stored session (of any front-end) without replaying its history."""
        session = self._restore(cwd, session_id, mcp_servers, additional_directories)
        options = self._start(session)
        return ResumeSessionResponse(modes=mode_state(session.mode), config_options=options)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """A new session in `cwd` continuing a copy of another's conversation (up to the exchange `_meta` names)."""
        return await fork.fork_session(self, session_id, cwd, additional_directories, mcp_servers, kwargs)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored conversations of every front-end (of folder `cwd` when given), newest first, paged."""
        return await session_methods.list_sessions(self.lister, cwd, cursor)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Cancel the session's run and free its resources (MCP servers, open questions); it stays stored."""
        await session_methods.close_session(self, session_id)
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Close the session if active and remove it from the store."""
        await session_methods.delete_session(self, session_id)
        return DeleteSessionResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Pick the session's model, mode or reasoning effort."""
        session = self._session(session_id)
        return await session_methods.set_config_option(
            self, session, self._settings(session.root), config_id, value
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Switch between ask (read-only), code and plan."""
        session = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError(INVALID_PARAMS, f"unknown mode {mode_id!r}; use one of: {', '.join(MODES)}")
        session.mode = mode_id
        self.store.save(session)
        await self.conn.session_update(session_id=session_id, update=helpers.update_current_mode(mode_id))
        await session_methods.send_options_if_changed(self, session, self._settings(session.root))
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Run the agent on the prompt (or a slash command) and answer with the stop reason."""
        session = self._session(session_id)
        if session.busy:
            raise RequestError(
                INVALID_REQUEST,
                f"session {session_id!r} is still answering a prompt; wait for it or send session/cancel first",
            )
        session.busy, session.cancel_requested = True, False
        try:
            await session_methods.give_title(self, session, prompt)
            settings = session_settings(session, self._settings(session.root))
            command = slash_command(prompt, prompt_commands(session.mcp))
            if command is not None:
                return await run_command(self, session, settings, *command)
            return await self._run(session, prompt, settings)
        finally:
            session.busy = False
            self.store.save(session)
            await session_methods.send_commands_if_changed(self, session)  # MCP servers started or restarted

    async def _run(self, session: AcpSession, prompt: list[Any], settings: Settings) -> PromptResponse:
        """A prompt turn of the agent (plan mode plans first)."""
        if session.mode == "plan":
            settings = settings.replace(plan=True)
        try:
            settings.require_model()
        except ModelNotConfigured as exc:
            raise RequestError(INTERNAL_ERROR, str(exc)) from None
        index = await self.indexes.get(session.root)

        def folders(task: str) -> Any:
            return read_folder_router(session.root, session.read_folders, task, self.read_indexes, settings)

        return await run_turn(self.conn, session, prompt, settings, self._files(session), index, folders)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's prompt: open permission questions are withdrawn, the run stops within a second."""
        session = self.sessions.get(session_id)
        if session is None or not session.busy:
            return
        session.cancel_requested = True
        session.requests.cancel_all()
        if session.run is not None:
            session.run.cancel()
        turn = session.turn

        def stop_hard() -> None:
            if turn is not None and not turn.done():
                log.info(
                    "run of session %s did not stop within %.1f s: cancelling it",
                    session_id,
                    CANCEL_GRACE_SECONDS,
                )
                turn.cancel()

        asyncio.get_running_loop().call_later(CANCEL_GRACE_SECONDS, stop_hard)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    # --- helpers ------------------------------------------------------------------------------------------

    def _open(
        self,
        session_id: str,
        root: Path,
        client_servers: list[Any],
        data: dict[str, Any] | None = None,
        reads: list[Path] | None = None,
    ) -> AcpSession:
        """Create the session object (restored from `data` when given) and start indexing its folder."""
        settings = self._settings(root)
        requests = PermissionRequests(self.conn, session_id, self.permission_timeout)
        edits = EditConsent(
            requests, root, dict(settings.permissions or {}), lambda: None, PermissionStore(root)
        )
        data = data or {}
        mode = data.get("mode") if data.get("mode") in MODES else DEFAULT_MODE
        memory = (
            Session.from_dict(data["memory"]) if isinstance(data.get("memory"), dict) else Session(session_id)
        )
        memory.id = session_id
        old = self.sessions.get(session_id)
        if old is not None and old.mcp is not None:
            old.mcp.close()
        session = AcpSession(session_id, root, memory, requests, edits, mode=mode)
        session.restore(data)
        session.read_folders = list(reads or [])
        session.mcp = mcp_manager(root, settings, client_servers)
        self.sessions[session_id] = session
        self.indexes.start(root, settings)
        return session

    def _warm_model(self, root: Path) -> None:
        """Import litellm and warm its request path (seconds) in a worker thread while the user types, so the
        first prompt does not wait for it. Not without a model: nothing would use it."""
        model = self._settings(root).model
        if self.model_warmup is None and model:
            from lsp_agent.acp.warmup import warm_up_requests

            self.model_warmup = asyncio.ensure_future(asyncio.to_thread(warm_up_requests, model))
            # a failed import is reported by the prompt that needs litellm, not here
            self.model_warmup.add_done_callback(lambda done: done.cancelled() or done.exception())

    def _restore(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None,
        additional_directories: list[str] | None,
    ) -> AcpSession:
        """A stored session made active again in `cwd` (load and resume)."""
        root = checked_folder(cwd)
        reads = requested_directories(additional_directories, root)
        data = self.store.load(session_id)
        if data is None:
            raise RequestError(
                INVALID_PARAMS,
                f"unknown session {session_id!r}: no stored session has this id; start a new one",
            )
        if session_id in self.sessions and self.sessions[session_id].busy:
            raise RequestError(
                INVALID_REQUEST, f"session {session_id!r} is answering a prompt; cancel it first"
            )
        if (
            additional_directories is None
        ):  # the client gave none: the ones the session had, where they still are
            stored = [
                d for d in data.get("additionalDirectories") or [] if isinstance(d, str) and Path(d).is_dir()
            ]
            reads = requested_directories(stored, root)
        return self._open(session_id, root, mcp_servers or [], data, reads)

    def _start(self, session: AcpSession) -> list[Any]:
        """Warm the model up, announce the commands after the answer; the config options the answer carries."""
        self._warm_model(session.root)
        options = config_options(session, self._settings(session.root))
        session.options_sent = session_methods.dumped(options)
        session_methods.announce(self, session)
        return options

    def _session(self, session_id: str) -> AcpSession:
        """The live session with this id, or a JSON-RPC error saying what to do."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(
                INVALID_PARAMS,
                f"unknown session {session_id!r}: create one with session/new (or restore it with session/load)",
            )
        return session

    def _settings(self, root: Path) -> Settings:
        """Settings for a folder: command-line flags over the environment and the folder's .env (and the API key
        given through `authenticate` when none of them names one)."""
        settings, errors = load_settings(root, flags=self.flags)
        for error in errors:
            log.warning("setting ignored: %s", error)
        if not settings.api_key and (key := auth.stored_key()):
            settings = settings.replace(api_key=key)
        return settings

    def _files(self, session: AcpSession) -> ClientFiles:
        """The client's fs/* methods for this session, as far as it offers them."""
        fs = self.client_caps.fs
        return ClientFiles(
            self.conn,
            session.id,
            asyncio.get_running_loop(),
            can_read=bool(fs and fs.read_text_file),
            can_write=bool(fs and fs.write_text_file),
        )
