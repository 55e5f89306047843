"""The per-ask choices of lspAgent.ask: which model (an override of the `model` setting), which workspace folder,
and which other folders the run may read (`readFolders`, or `@name/...` mentions in the task).

An ask about a file runs in the folder holding it. An ask without a file runs in the folder the editor names
(`folder`: its URI or path, as the clients' folder pickers send it), or in the only folder; with several folders
and none named it is refused with the list, so the editor can ask the user.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from lsp_agent.workspace.folders import FolderAccess, FolderError, folder_access, named_folders

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer
    from lsp_agent.tools.read_folders import FolderRouter


def is_range(value: Any) -> bool:
    """True for an LSP Range given as a dict."""
    try:
        return all(
            isinstance(value[end][k], int) and value[end][k] >= 0
            for end in ("start", "end")
            for k in ("line", "character")
        )
    except (KeyError, TypeError):
        return False


def parse_model(value: Any) -> str | None:
    """The `model` argument: a litellm model string overriding the setting for this ask, or None."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("lspAgent.ask: 'model' must be a litellm model string, e.g. openai/gpt-4o-mini")
    return value.strip()


def parse_folder(value: Any) -> str | None:
    """The `folder` argument: a workspace folder URI or path, or None."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError("lspAgent.ask: 'folder' must be the URI or path of a workspace folder")
    return value


def parse_read_folders(value: Any) -> list[str] | None:
    """The `readFolders` argument: the other workspace folders (names, URIs or paths) the run may read, or None."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(
            "lspAgent.ask: 'readFolders' must be a list of workspace folder names, URIs or paths, e.g. [\"api\"]"
        )
    return [v.strip() for v in value]


def workspace_folders(server: AgentServer) -> dict[str, Path]:
    """{name: root} of the workspace folders (the editor's names, made unique and usable as `@name/...`)."""
    try:
        folders = list(server.workspace.folders.values())
    except Exception:  # noqa: BLE001 - no workspace yet
        folders = []
    pairs = [(f.name, Path(p)) for f in folders if (p := to_fs_path(f.uri))]
    if not pairs:
        pairs = [(None, root) for root in server.workspace_roots()]
    return named_folders(pairs)


def read_access(server: AgentServer, root: Path, task: str, requested: list[str] | None) -> FolderAccess:
    """Which other folders a run in `root` may read: those `readFolders` names and those the task mentions."""
    try:
        return folder_access(root, workspace_folders(server), requested or (), task)
    except FolderError as exc:
        raise ValueError(f"lspAgent.ask: readFolders: {exc}") from None


def folder_router(
    server: AgentServer, access: FolderAccess, max_file_size: int | None
) -> FolderRouter | None:
    """The router of a run in a multi-root workspace: the editor's view of each folder and its index."""
    if not access.others:
        return None  # one folder: nothing to read across, no path to mistake
    from lsp_agent.tools.read_folders import FolderRouter
    from lsp_agent.workspace.overlay import Overlay

    def overlay_for(root: Path) -> Overlay:
        return Overlay(root, read_disk=server.read_buffer_or_disk, max_file_size=max_file_size)

    return FolderRouter(access, overlay_for=overlay_for, index_for=server.indexes.index_for)


def choose_root(server: AgentServer, uri: str | None, folder: str | None) -> Path:
    """The folder an ask runs in; ValueError says which folders there are when the choice is unclear."""
    roots = server.workspace_roots()
    if folder is not None:
        path = Path((to_fs_path(folder) or folder) if folder.startswith("file:") else folder).absolute()
        match = next((r for r in roots if r == path), None)
        if match is None:
            raise ValueError(f"lspAgent.ask: 'folder' {folder} is not a workspace folder; {_listing(roots)}")
        return match
    if uri or len(roots) <= 1:
        return server.root_for(uri)
    raise ValueError(
        f"lspAgent.ask: this workspace has {len(roots)} folders and the ask names no file: "
        f"pass 'folder' ({_listing(roots)})"
    )


def _listing(roots: list[Path]) -> str:
    return "the folders are " + ", ".join(str(r) for r in roots) if roots else "no folder is open"


def model_choices(server: AgentServer) -> dict[str, Any]:
    """The `model` and `models` of lspAgent.status: the default model and the list to pick from for one ask."""
    default = server.settings.model
    models = list(server.settings.models)
    if default and default not in models:
        models.insert(0, default)
    return {"model": default, "models": models}
