"""`ask --read-folder PATH`: other folders the run may read (as `@name/...`), beside the one it works in (--repo).

Each folder is named after its directory (`--read-folder ../api` is `@api`); a mention `@api/...` in the task then
attaches that file. The folders' indexes open only when the run first searches them (search_code, find_symbol).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.workspace.folders import FolderAccess, folder_access, named_folders

if TYPE_CHECKING:
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.tools.read_folders import FolderRouter


def add_flag(p: argparse.ArgumentParser) -> None:
    """The repeatable --read-folder flag."""
    p.add_argument(
        "--read-folder",
        action="append",
        default=[],
        metavar="PATH",
        help="another folder the run may read, as @NAME/path (NAME: its directory name); repeatable; "
        "edits stay in --repo",
    )


def cli_access(root: Path, paths: list[str], task: str) -> FolderAccess:
    """The folders of a CLI run: its --repo and each --read-folder; ValueError names one that is no directory."""
    resolved: list[Path] = []
    for given in paths:
        path = Path(given).expanduser().resolve()
        if not path.is_dir():
            raise ValueError(
                f"--read-folder {given}: not a directory; give the path of a folder to read (e.g. ../api)"
            )
        if path != root and path not in resolved:
            resolved.append(path)
    named = named_folders([(None, root), *((None, p) for p in resolved)])
    return folder_access(root, named, list(named)[1:], task)


class FolderIndexes:
    """The indexes of the read folders, opened on first use (in the tool's worker thread) and closed at the end."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.opened: dict[Path, WorkspaceIndex | None] = {}
        self._lock = threading.Lock()

    def index_for(self, root: Path) -> WorkspaceIndex | None:
        """The folder's index, refreshed once; None when it cannot be opened (a warning says why)."""
        from lsp_agent.assembly import open_index

        with self._lock:
            if root not in self.opened:
                try:
                    self.opened[root] = open_index(root, self.settings)
                except Exception as exc:  # noqa: BLE001 - the other read tools still reach the folder
                    print(f"warning: the index of {root} is unavailable ({exc})", file=sys.stderr)
                    self.opened[root] = None
            return self.opened[root]

    def close(self) -> None:
        """Close every index opened."""
        for index in self.opened.values():
            if index is not None:
                index.close()
        self.opened.clear()


def cli_router(access: FolderAccess, indexes: FolderIndexes) -> FolderRouter | None:
    """The run's folder router when --read-folder opened any folder (else None: one folder, as before)."""
    if not access.others:
        return None
    from lsp_agent.tools.read_folders import FolderRouter

    return FolderRouter(access, index_for=indexes.index_for)
