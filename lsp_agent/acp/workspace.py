"""Per-folder resources of ACP sessions: the folder checked, its workspace index (built in the background, shared)
and MCP servers."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError

from lsp_agent.config import Settings

if TYPE_CHECKING:
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.mcp.manager import McpManager

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INDEX_WAIT_SECONDS = 20.0  # a prompt waits this long for a first index build, then runs without the index


@dataclass
class FolderIndex:
    """One folder's index and the background task building it."""

    index: WorkspaceIndex | None = None
    task: asyncio.Task | None = None
    error: str | None = None
    files: int = 0


@dataclass
class IndexPool:
    """One WorkspaceIndex per folder, refreshed in a worker thread, reused by every session of that folder."""

    folders: dict[Path, FolderIndex] = field(default_factory=dict)

    def start(self, root: Path, settings: Settings, *, force: bool = False) -> FolderIndex:
        """Start (or, with force, restart) building the index of `root` in the background."""
        folder = self.folders.setdefault(root, FolderIndex())
        if folder.task is not None and (not folder.task.done() or not force):
            return folder
        folder.task = asyncio.ensure_future(asyncio.to_thread(self._build, root, settings, folder))
        return folder

    async def get(self, root: Path, timeout: float = INDEX_WAIT_SECONDS) -> WorkspaceIndex | None:
        """The folder's index once built (None while it takes longer than `timeout`, or when it failed)."""
        folder = self.folders.get(root)
        if folder is None or folder.task is None:
            return None
        try:
            await asyncio.wait_for(asyncio.shield(folder.task), timeout)
        except TimeoutError:
            log.info("the index of %s is still being built; this prompt runs without it", root)
            return None
        except Exception:  # noqa: BLE001 - recorded in folder.error by _build
            return None
        return folder.index

    def describe(self, root: Path) -> str:
        """One line about a folder's index for /status."""
        folder = self.folders.get(root)
        if folder is None or folder.task is None:
            return "not started"
        if not folder.task.done():
            return "being built"
        if folder.error:
            return f"unavailable ({folder.error})"
        team = folder.index.team if folder.index is not None else None
        if team is not None and team.status:
            return f"ready ({folder.files} files, local only: {team.status})"
        return f"ready ({folder.files} files{f', team index {team.where}' if team else ''})"

    @staticmethod
    def _build(root: Path, settings: Settings, folder: FolderIndex) -> None:
        """Open (or reuse) and refresh the index; failures leave the agent working without it."""
        try:
            from lsp_agent.assembly import REPO_MAP_CHARS
            from lsp_agent.index import IndexConfig, WorkspaceIndex
            from lsp_agent.workspace.secrets import secret_files_of

            if folder.index is None:
                config = IndexConfig(
                    max_file_size=settings.max_file_size,
                    exclude=list(settings.index_exclude) + secret_files_of(settings).index_excludes(),
                    embeddings=settings.embeddings,
                    store=settings.index_store,
                )
                folder.index = WorkspaceIndex(root, config)
            stats = folder.index.refresh()
            folder.index.repo_map(REPO_MAP_CHARS)  # cached: a prompt's system prompt reads it without waiting
            folder.files = int(getattr(stats, "files", 0) or 0)
            folder.error = None
        except Exception as exc:  # noqa: BLE001 - search_code then says the index is unavailable
            log.warning("indexing %s failed: %s", root, exc)
            folder.error = str(exc)
            folder.index = None


def client_server_spec(server: Any) -> tuple[str, dict[str, Any]]:
    """(name, settings-style spec) of one mcpServers entry of session/new (stdio, http or sse)."""
    data = server.model_dump(by_alias=True, exclude_none=True)
    name = str(data.get("name") or "")
    if "command" in data:
        spec: dict[str, Any] = {"command": data["command"], "args": list(data.get("args") or [])}
        env = {e["name"]: e["value"] for e in data.get("env") or []}
        if env:
            spec["env"] = env
        return name, spec
    spec = {"url": data.get("url")}
    headers = {h["name"]: h["value"] for h in data.get("headers") or []}
    if headers:
        spec["headers"] = headers
    if data.get("type"):
        spec["type"] = data["type"]
    return name, spec


def mcp_manager(root: Path, settings: Settings, client_servers: list[Any]) -> McpManager | None:
    """The session's MCP servers: the workspace and user configuration plus the client's (the client wins)."""
    from lsp_agent.mcp.config import parse_server, servers_for
    from lsp_agent.mcp.manager import McpManager

    servers, errors = servers_for(settings, root)
    by_name = {s.name: s for s in servers}
    for entry in client_servers:
        name, spec = client_server_spec(entry)
        try:
            server = parse_server(
                name, spec, "the ACP client", root=root, startup_timeout=settings.mcp_startup_timeout
            )
        except ValueError as exc:
            errors.append(str(exc))
            continue
        by_name[server.name] = server
    if not by_name and not errors:
        return None
    manager = McpManager(list(by_name.values()), root=root)
    manager.config_errors = list(errors)
    return manager


def checked_folder(cwd: str) -> Path:
    """`cwd` as a Path when it is an absolute, existing, readable directory; else a JSON-RPC error."""
    if not isinstance(cwd, str) or not cwd:
        raise RequestError(INVALID_PARAMS, "cwd is required: the absolute path of the folder to work in")
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError(INVALID_PARAMS, f"cwd must be an absolute path, got {cwd!r}")
    if not path.is_dir():
        raise RequestError(INVALID_PARAMS, f"cwd {cwd!r} is not an existing directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise RequestError(INVALID_PARAMS, f"cwd {cwd!r} is not readable by this process")
    return path.resolve()
