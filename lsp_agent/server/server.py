"""The language server object: state shared by the handlers (settings, indexes, runs, proposals, sessions)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from lsp_agent import __version__
from lsp_agent.agent.conversation.rules import rules_status
from lsp_agent.config import Settings
from lsp_agent.server.ask_choices import model_choices
from lsp_agent.server.conversations import EditorConversations
from lsp_agent.server.edits import DocumentState, EditSupport
from lsp_agent.server.indexing import IndexManager
from lsp_agent.server.next_edits import NextEdits
from lsp_agent.server.progress import ProgressReporter
from lsp_agent.server.proposals import PendingProposal, ProposalStore
from lsp_agent.server.runs import RunManager, RunRecord
from lsp_agent.server.setting_names import editor_wording
from lsp_agent.server.settle import reconcile_applied
from lsp_agent.server.transport import HardenedServer
from lsp_agent.settings_sources import load_settings

log = logging.getLogger(__name__)

SECTION = "lspAgent"
MAX_CONTEXT_CHARS = 20_000


class AgentServer(HardenedServer):
    """lsp-agent's LanguageServer: handlers live in features.py and commands.py and use this state."""

    def __init__(self) -> None:
        super().__init__("lsp-agent", __version__)
        self.init_options: dict[str, Any] = {}
        self.client_config: dict[str, Any] = {}
        self.settings = Settings()
        self.settings_errors: list[str] = []
        self.settings_ready = asyncio.Event()  # set once `initialized` has read every settings source
        self.indexes = IndexManager(
            lambda title: ProgressReporter(self, title),
            lambda: self.settings,
            self.open_buffers,
            self.show_error,
            self.show_warning,
            self.activity.yield_to_editor,
        )
        self.runs = RunManager(self)
        self.proposals = ProposalStore()
        self.next_edits = NextEdits(self)  # proposals for the sites a changed definition implies
        self.last_apply: Any = None  # what the last apply changed (undo.LastApply), for lspAgent.undoApply
        # the edits of the "Apply" code actions offered lately (undo.OfferedEdit, by uri, text before and edit):
        # undo recognises one applied by the text it leaves
        self.offered_edits: dict[tuple[Any, ...], Any] = {}
        self.conversations = EditorConversations(self)  # persisted in the store the CLI and ACP share
        self.sessions: dict[str, Any] = self.conversations.sessions
        self.progress_cancel_handlers: dict[str | int, Callable[[], None]] = {}
        # name -> callable returning JSON-ready data merged into lspAgent.status (e.g. "mcp": server states)
        self.status_providers: dict[str, Callable[[], Any]] = {}
        # provider(registry, settings) for each run, handed to build_run: tools of this server's own (a scenario
        # server's test tool); the built-in, exec and MCP tools come from the run assembly itself
        self.tool_providers: list[Callable[[Any, Settings], None]] = []
        # MCP servers (EditorMcp): started by the first run that needs them, stopped at shutdown; loaded by
        # attach_plugins() after the initialize reply, so their imports never delay it
        self.mcp: Any = None
        self.plugins_error: str | None = None  # why MCP and the exec tools could not be loaded
        self._plugins_lock = asyncio.Lock()
        self.diagnosed_uris: set[str] = set()
        self.status_providers["rules"] = lambda: rules_status(self.workspace_roots(), self.settings)

    async def attach_plugins(self) -> None:
        """Wire in MCP (status rows, tools) and the sandboxed exec tools; their modules load in a worker thread."""
        async with self._plugins_lock:
            if self.mcp is not None or self.plugins_error is not None:
                return
            try:
                editor_mcp, sandbox_status = await asyncio.to_thread(_load_plugins)
            except Exception as exc:  # the server works without them: indexing, runs with the built-in tools
                log.exception("loading the MCP and sandbox plugins failed")
                self.plugins_error = error = f"{type(exc).__name__}: {exc}"
                self.status_providers["mcp"] = self.status_providers["sandbox"] = lambda: {"error": error}
                self.show_error(f"lsp-agent: MCP servers and code execution are unavailable ({error})")
                return
            self.mcp = editor_mcp(
                self.show_error, settings=lambda: self.settings, root=lambda: self.primary_root
            )
            self.status_providers["mcp"] = self.mcp.status
            self.status_providers["sandbox"] = sandbox_status

    # ----- client capabilities ----------------------------------------------------------------------------

    def supports_progress(self) -> bool:
        """True when the client takes server-initiated progress."""
        window = self.client_capabilities.window if self._initialized() else None
        return bool(window and window.work_done_progress)

    def supports_configuration(self) -> bool:
        """True when the client answers workspace/configuration."""
        ws = self.client_capabilities.workspace if self._initialized() else None
        return bool(ws and ws.configuration)

    def edit_support(self) -> EditSupport:
        """What WorkspaceEdits the client takes."""
        return EditSupport.from_capabilities(self.client_capabilities if self._initialized() else None)

    def _initialized(self) -> bool:
        return getattr(self.protocol, "client_capabilities", None) is not None

    # ----- settings ---------------------------------------------------------------------------------------

    @property
    def primary_root(self) -> Path | None:
        """The first workspace folder (where a .env is looked up)."""
        roots = self.workspace_roots()
        return roots[0] if roots else None

    def workspace_roots(self) -> list[Path]:
        """The workspace folders as paths (the root URI when the client sent no folders)."""
        try:
            ws = self.workspace
        except Exception:
            return []
        roots = [Path(p) for f in ws.folders.values() if (p := to_fs_path(f.uri))]
        if not roots and ws.root_path:
            roots = [Path(ws.root_path)]
        return [r.absolute() for r in roots]

    def reload_settings(self, *, show: bool = True) -> list[str]:
        """Recompute settings from all sources; shows one error naming each bad setting. Returns the errors."""
        client: dict[str, Any] = {}
        _merge_into(client, _section(self.init_options))
        _merge_into(client, _section(self.client_config))
        self.settings, errors = load_settings(self.primary_root, client=client)
        errors = [editor_wording(e) for e in errors]
        if not show:
            return errors
        if errors and errors != self.settings_errors:
            self.show_error("lsp-agent settings: " + "; ".join(errors))
        self.settings_errors = errors
        return errors

    # ----- documents --------------------------------------------------------------------------------------

    def open_document(self, path: Path) -> Any | None:
        """The open TextDocument for a path, or None when the editor does not have it open."""
        uri = from_fs_path(str(path))
        return self.workspace.text_documents.get(uri) if uri else None

    def open_buffers(self) -> list[tuple[Path, str]]:
        """(path, text) of every open file document (on the event loop thread)."""
        out: list[tuple[Path, str]] = []
        for uri, doc in list(self.workspace.text_documents.items()):
            fs_path = to_fs_path(uri)
            if fs_path:
                out.append((Path(fs_path).absolute(), doc.source))
        return out

    def document_state(self, path: Path) -> DocumentState:
        """What the user sees for a file: the open buffer (with version) or the disk text (None when absent)."""
        doc = self.open_document(path)
        if doc is not None:
            return DocumentState(doc.source, doc.version)
        from lsp_agent.workspace.proposal import read_disk_text

        try:
            return DocumentState(read_disk_text(path))
        except (OSError, ValueError):
            return DocumentState(None)

    def read_buffer_or_disk(self, path: Path) -> str:
        """Overlay read hook: an open document's unsaved text, else the disk."""
        doc = self.open_document(path)
        if doc is not None:
            return doc.source
        from lsp_agent.workspace.proposal import read_disk_text

        return read_disk_text(path)  # type: ignore[return-value]  # None -> the overlay reports "not found"

    def root_for(self, uri: str | None) -> Path:
        """The workspace folder a run works in: the one holding `uri`, else the first one."""
        if uri:
            path = to_fs_path(uri)
            if path:
                folder = self.indexes.folder_for(Path(path).absolute())
                if folder is not None:
                    return folder.root
        root = self.primary_root
        if root is None:
            raise ValueError("lsp-agent needs a workspace folder (open a folder, not a single file)")
        return root

    def selection_context(self, uri: str | None, rng: dict | None, root: Path) -> str | None:
        """The editor context of an ask: the file, and the selected lines when there is a selection."""
        if not uri:
            return None
        fs_path = to_fs_path(uri)
        if not fs_path:
            return None
        path = Path(fs_path).absolute()
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = str(path)
        text = self.document_state(path).text
        if text is None:
            return f"The user is looking at {rel} (not readable)."
        if not rng:
            return f"The user is looking at the file {rel} ({len(text.splitlines())} lines)."
        lines = text.splitlines()
        start, end = rng["start"]["line"], rng["end"]["line"]
        if end > start and rng["end"]["character"] == 0:
            end -= 1
        end = min(end, len(lines) - 1)
        selected = "\n".join(lines[start : end + 1])[:MAX_CONTEXT_CHARS]
        return f"The user selected lines {start + 1}-{end + 1} of {rel}:\n```\n{selected}\n```"

    # ----- sessions and proposals -------------------------------------------------------------------------

    def session(self, session_id: str | None, root: Path | None = None) -> Any:
        """The conversation with this id (loaded or created on first use); the folder's current one when None."""
        return self.conversations.get(session_id, root)

    def add_pending(self, record: RunRecord, proposal: Any) -> PendingProposal:
        """Keep a run's proposal for the user and show its hints."""
        pending = PendingProposal.create(record.run_id, record.root, proposal, record.session.id)
        self.proposals.add(pending)
        self.publish_hints()
        return pending

    def publish_hints(self, reconcile: bool = True) -> None:
        """(Re)publish the hint diagnostics of every open document touched by a pending proposal.

        First settles what the open documents now hold of the proposals (an applied code action shows up here).
        """
        codec = self.workspace.position_codec
        wanted = self.proposals.uris() & set(self.workspace.text_documents)
        if reconcile and wanted and reconcile_applied(self, wanted):
            return  # settling republished the hints
        for uri in wanted | self.diagnosed_uris:
            diagnostics = self.proposals.diagnostics(uri, self.document_state, codec) if uri in wanted else []
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )
        self.diagnosed_uris = wanted

    # ----- messages ---------------------------------------------------------------------------------------

    def show_error(self, message: str) -> None:
        """A window/showMessage error (and a log line)."""
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def show_warning(self, message: str) -> None:
        """A window/showMessage warning (and a log line)."""
        log.info("%s", message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    def show_info(self, message: str) -> None:
        """A window/showMessage info."""
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))

    def log_line(self, message: str, level: types.MessageType = types.MessageType.Info) -> None:
        """A readable window/logMessage line."""
        self.window_log_message(types.LogMessageParams(type=level, message=message))

    # ----- status -----------------------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        """lspAgent.status: index, runs, pending proposals, settings problems, and the providers' sections.

        Index counts and provider sections are read in a worker thread: they may wait on a busy index or probe.
        """
        await self.attach_plugins()  # their status rows (mcp, sandbox) belong in every answer
        out: dict[str, Any] = {
            "runs": self.runs.list(),
            "pending": [p.to_dict() for p in self.proposals],
            **model_choices(self),  # "model" (the default) and "models" (to pick from for one ask)
        }
        if self.settings_errors:
            out["settingsErrors"] = list(self.settings_errors)
        out.update(await asyncio.to_thread(self._slow_status, list(self.status_providers.items())))
        return out

    def _slow_status(self, providers: list[tuple[str, Callable[[], Any]]]) -> dict[str, Any]:
        """The parts of the status that may block: index counts and the providers."""
        out: dict[str, Any] = {"index": self.indexes.stats()}
        for name, provider in providers:
            try:
                out[name] = provider()
            except Exception as exc:
                out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return out


def _load_plugins() -> tuple[Any, Any]:
    """Import the MCP and sandbox pieces the server plugs in (call from a worker thread).

    The run assembly's own imports (exec tools, MCP bridge) load here too, off the event loop.
    """
    import lsp_agent.assembly
    import lsp_agent.mcp.setup
    import lsp_agent.tools.exec_tools  # noqa: F401
    from lsp_agent.mcp.editor import EditorMcp
    from lsp_agent.sandbox.isolation import sandbox_status

    return EditorMcp, sandbox_status


def _section(options: Any) -> dict[str, Any]:
    """The `lspAgent` section of settings given either wrapped ({"lspAgent": {...}}) or bare."""
    if not isinstance(options, Mapping):
        return {}
    inner = options.get(SECTION)
    return dict(inner) if isinstance(inner, Mapping) else dict(options)


def _merge_into(target: dict[str, Any], values: Mapping[str, Any]) -> None:
    """Deep-merge editor settings (later sources win key by key)."""
    for key, value in values.items():
        if (
            isinstance(value, Mapping)
            and isinstance(target.get(key), dict)
            and key not in ("permissions", "mcpServers")
        ):
            _merge_into(target[key], value)
        else:
            target[key] = dict(value) if isinstance(value, Mapping) else value
