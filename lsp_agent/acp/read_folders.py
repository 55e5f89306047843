"""`additionalDirectories` of session/new, load and resume: other folders a session's runs may read (as `@name/...`).

The same read folders as `lsp-agent ask --read-folder` and the editor's multi-root workspaces: the run reads and
searches them, writes stay in the session's `cwd`. Their indexes open the first time a run searches them.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.workspace.folders import folder_access, named_folders

if TYPE_CHECKING:
    from lsp_agent.config import Settings
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.tools.read_folders import FolderRouter

log = logging.getLogger(__name__)


def checked_directories(paths: Any, root: Path) -> list[Path]:
    """The additional directories as resolved Paths (the session's own folder left out); ValueError names a bad one."""
    if paths is None:
        return []
    if not isinstance(paths, list):
        raise ValueError("additionalDirectories must be a list of absolute paths")
    folders: list[Path] = []
    for given in paths:
        if not isinstance(given, str) or not os.path.isabs(given):
            raise ValueError(f"additionalDirectories: {given!r} is not an absolute path")
        path = Path(given)
        if not path.is_dir():
            raise ValueError(f"additionalDirectories: {given!r} is not an existing directory")
        if not os.access(path, os.R_OK | os.X_OK):
            raise ValueError(f"additionalDirectories: {given!r} is not readable by this process")
        path = path.resolve()
        if path != root and path not in folders:
            folders.append(path)
    return folders


def requested_directories(paths: Any, root: Path) -> list[Path]:
    """additionalDirectories of a request as Paths; a JSON-RPC error (invalid params) names a bad one."""
    from acp import RequestError

    try:
        return checked_directories(paths, root)
    except ValueError as exc:
        raise RequestError(-32602, str(exc)) from None


class ReadFolderIndexes:
    """The indexes of read folders, opened on first use (in a tool's worker thread) and kept for later runs."""

    def __init__(self) -> None:
        self.opened: dict[Path, WorkspaceIndex | None] = {}
        self.settings: Settings | None = None
        self._lock = threading.Lock()

    def index_for(self, root: Path) -> WorkspaceIndex | None:
        """The folder's index, refreshed once; None when it cannot be opened (logged)."""
        from lsp_agent.assembly import open_index

        with self._lock:
            if root not in self.opened and self.settings is not None:
                try:
                    self.opened[root] = open_index(root, self.settings)
                except Exception as exc:  # noqa: BLE001 - the other read tools still reach the folder
                    log.warning("the index of %s is unavailable: %s", root, exc)
                    self.opened[root] = None
            return self.opened.get(root)

    def close(self) -> None:
        """Close every index opened."""
        with self._lock:
            for index in self.opened.values():
                if index is not None:
                    index.close()
            self.opened.clear()


def read_folder_router(
    root: Path, folders: list[Path], task: str, indexes: ReadFolderIndexes, settings: Settings
) -> FolderRouter | None:
    """The run's router to its read folders (None without any: the run sees its own folder only)."""
    if not folders:
        return None
    from lsp_agent.tools.read_folders import FolderRouter

    indexes.settings = settings
    named = named_folders([(None, root), *((None, p) for p in folders)])
    access = folder_access(root, named, list(named)[1:], task)
    return FolderRouter(access, index_for=indexes.index_for)
