"""One run assembly for every front-end: the index, the registry (built-ins, exec tools, MCP) and the AgentRun."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.events import AgentEvent, EventSink

if TYPE_CHECKING:
    from lsp_agent.agent.consent.permissions import PermissionAsker
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.agent.loop.run import AgentRun
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.config import Settings
    from lsp_agent.index import IndexConfig, WorkspaceIndex
    from lsp_agent.mcp.manager import McpManager
    from lsp_agent.tools.read_folders import FolderRouter
    from lsp_agent.tools.registry import ToolRegistry
    from lsp_agent.workspace.overlay import Overlay

log = logging.getLogger(__name__)

# Adds tools to a run's registry: provider(registry, settings). For front-ends' own tools (a test's scenario tool).
ToolProvider = Callable[[Any, Any], None]
REPO_MAP_CHARS = 2000  # the size of the repo map a run puts in its system prompt
WRITE_TOOLS = ("write_file", "edit_file", "delete_file")  # built-in tools that propose changes


def index_config(settings: Settings, *, extra_exclude: Sequence[str] = ()) -> IndexConfig:
    """How a workspace is indexed under these settings: size limit, excludes (secret files always), embeddings."""
    from lsp_agent.index import IndexConfig
    from lsp_agent.workspace.secrets import secret_files_of

    return IndexConfig(
        max_file_size=settings.max_file_size,
        exclude=list(settings.index_exclude)
        + secret_files_of(settings).index_excludes()
        + list(extra_exclude),
        embeddings=settings.embeddings,
        api_base=settings.api_base,
        api_key=settings.api_key,
        store=settings.index_store,
    )


def open_index(root: Path, settings: Settings) -> WorkspaceIndex:
    """The workspace index of a one-off run, refreshed and with its repo map ready (blocking: use a thread).

    The language server keeps its indexes open instead (server/indexing.py); both configure them with
    index_config(). Raises what opening or refreshing raises (the caller decides whether a run goes on).
    """
    from lsp_agent.index import WorkspaceIndex

    index = WorkspaceIndex(root, index_config(settings))
    try:
        index.refresh()
        index.repo_map(REPO_MAP_CHARS)  # cached: the run's system prompt reads it without waiting
    except BaseException:
        index.close()
        raise
    return index


async def build_registry(
    settings: Settings,
    *,
    mcp: McpManager | None = None,
    allow_external: bool = False,
    tools: Sequence[ToolProvider] = (),
    exec_tools: bool = True,
    read_only: bool = False,
) -> tuple[ToolRegistry, Settings, list[str]]:
    """(registry, settings, errors): built-in and exec tools (unless `exec_tools` is False: the sandbox could
    not load), `tools`' additions, and the tools of `mcp`'s servers (started lazily).

    `read_only` (a session in ask mode) keeps only the tools that read: no edit tools, nothing that runs code or
    reaches outside (exec and MCP tools), so the model is never offered them.

    The returned settings carry "server__*" permission patterns resolved to tool names (every MCP tool allowed
    when `allow_external`); errors name MCP servers that failed to start, whose tools are left out (a failing
    provider is logged and loses its tools). The settings passed in are never changed.
    """
    from lsp_agent.mcp.setup import attach_mcp_tools
    from lsp_agent.tools.exec_tools import add_exec_tools
    from lsp_agent.tools.registry import default_registry

    registry = default_registry()
    if exec_tools and not read_only:
        add_exec_tools(registry, settings)
    for provider in tools:
        try:
            provider(registry, settings)
        except Exception:  # a broken provider costs its tools, not the run
            log.exception("tool provider %r failed; the run goes on without its tools", provider)
    if read_only:
        for tool in registry.tools():
            if tool.name in WRITE_TOOLS or tool.permission != "none":
                registry.unregister(tool.name)
        return registry, settings, []
    settings, errors = await attach_mcp_tools(mcp, registry, settings, allow_external=allow_external)
    return registry, settings, errors


async def build_run(
    task: str,
    settings: Settings,
    root: Path,
    *,
    sink: EventSink | None,
    asker: PermissionAsker | None,
    index: WorkspaceIndex | None = None,
    overlay: Overlay | None = None,
    session: Session | None = None,
    context: str | None = None,
    mcp: McpManager | None = None,
    allow_external: bool = False,
    run_id: str | None = None,
    model_client: ModelClient | None = None,
    tools: Sequence[ToolProvider] = (),
    exec_tools: bool = True,
    folders: FolderRouter | None = None,
    stream_text: bool = False,
    read_only: bool = False,
) -> AgentRun:
    """The AgentRun of one task: front-ends differ only in their sink, their asker and how they deliver the proposal.

    Await `run.run()` for the RunResult (its proposal is what the front-end offers for consent) and call
    `run.cancel()` to stop it. MCP servers that fail to start are reported on the sink as `error` events of
    kind "mcp"; the run goes on without their tools. `folders` opens other workspace folders for reading (its
    paths `@name/...`); writes stay in `root`. `stream_text`: the sink also gets the model's text as it streams
    (`text_delta` events); `read_only`: see build_registry.
    """
    from lsp_agent.agent.loop.run import AgentRun

    run_id = run_id or uuid.uuid4().hex[:12]
    registry, settings, errors = await build_registry(
        settings,
        mcp=mcp,
        allow_external=allow_external,
        tools=tools,
        exec_tools=exec_tools,
        read_only=read_only,
    )
    for error in errors:
        _report(sink, run_id, f"{error}; continuing without its tools")
    run = AgentRun(
        task,
        settings,
        Path(root),
        sink=sink,
        registry=registry,
        index=index,
        overlay=overlay,
        session=session,
        permission=asker,
        run_id=run_id,
        context=context,
        model_client=model_client,
    )
    _prepare(run, folders, stream_text)
    return run


def _prepare(run: AgentRun, folders: FolderRouter | None, stream_text: bool) -> None:
    """What every run gets before it starts: other folders to read, text streaming, rules, memory share."""
    from lsp_agent.agent.conversation.rules import apply_project_rules
    from lsp_agent.agent.conversation.session import fit_conversation

    if folders is not None:
        from lsp_agent.tools.read_folders import attach_folders

        attach_folders(run, folders)  # the other workspace folders: read-only, their names shown to the model
    run.events.stream_text = stream_text
    apply_project_rules(run)  # AGENTS.md and .lsp-agent/rules.md join the system prompt (a `context` event)
    fit_conversation(run)  # the conversation memory gets a share of the model's context window


def _report(sink: EventSink | None, run_id: str, message: str) -> None:
    """An `error` event (kind "mcp") on the sink; a failing sink is logged."""
    if sink is None:
        return
    try:
        sink(AgentEvent("error", run_id, {"message": message, "kind": "mcp"}))
    except Exception:  # noqa: BLE001 - the sink belongs to the caller
        log.exception("event sink failed")
