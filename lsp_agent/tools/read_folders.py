"""Cross-folder reading: a run's read tools reach the other workspace folders it may read; writes there are refused.

The registry hands every call to `FolderRouter.call` (ToolContext.router). A read tool whose path names another
folder (`@name/path`, or an absolute path inside it) runs in a read-only context of that folder: its own root, an
overlay nobody writes, its own index and secret values, and the same settings, so the path checks, ignore rules,
secret files, size and binary limits apply exactly as in the run's own folder. Paths in its output are written
back as `@name/...`. search_code and find_symbol search each readable folder's index after the run's own. Any other
tool with a path argument in another folder is refused with an observation: writes stay in the run's own folder.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.workspace.folders import FolderAccess
from lsp_agent.workspace.overlay import FileTooLargeError, NotTextError, Overlay
from lsp_agent.workspace.paths import PathError

if TYPE_CHECKING:
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.tools.registry import Tool

log = logging.getLogger(__name__)

Caller = Callable[["Tool", ToolContext, dict[str, Any]], Awaitable[Any]]
PATH_TOOLS = {"read_file": "path", "get_file_info": "path", "list_files": "path", "search_text": "path"}
INDEX_TOOLS = ("search_code", "find_symbol")
_ERRORS = (ToolError, PathError, NotTextError, FileTooLargeError, FileNotFoundError, IsADirectoryError)
_HIT_LINE = re.compile(r"^(?!\[)([^\s:][^:\n]*):(\d+)", re.MULTILINE)  # search_text's 'path:line:'
_CODE_HEADER = re.compile(r"^(\d+\. )(?=\S+:\d+-\d+)", re.MULTILINE)  # search_code's '1. path:3-9'
_SYMBOL_LINE = re.compile(r"^(  )(?=\S+:\d+)", re.MULTILINE)  # find_symbol's '  path:3-9 ...'


@dataclass
class FolderRouter:
    """Routes a run's tool calls to the folders it may read; refuses writes outside its own folder."""

    access: FolderAccess
    overlay_for: Callable[[Path], Overlay] | None = None  # an editor's view (unsaved buffers); else the disk
    index_for: Callable[[Path], WorkspaceIndex | None] | None = None
    _contexts: dict[str, ToolContext] = field(default_factory=dict)

    async def call(self, tool: Tool, ctx: ToolContext, args: dict[str, Any], call: Caller) -> Any:
        """Run one call where its paths point (see the module docstring)."""
        if tool.name in PATH_TOOLS:
            target = self._target(tool.name, args)
            if target is None:
                return await call(tool, ctx, args)
            name, routed = target
            return await self._foreign(tool, ctx, name, routed, call)
        if tool.name in INDEX_TOOLS:
            return await self._every_index(tool, ctx, args, call)
        self._refuse_writes(tool, args)
        return await call(tool, ctx, args)

    def _target(self, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """(folder, the arguments with its path made relative to it) when the call reads another folder."""
        key = PATH_TOOLS[tool]
        found = self.access.locate(args.get(key) or "")
        if found is None and tool == "list_files" and not args.get(key):
            found = self.access.locate(args.get("pattern") or "")  # list_files(pattern='@api/**/*.py')
            if found is not None:
                return self._readable(found[0]), {**args, "pattern": found[1], key: None}
        if found is None:
            return None
        return self._readable(found[0]), {**args, key: found[1]}

    def _readable(self, name: str) -> str:
        """`name` when this run may read that folder, else a ToolError saying how to open it."""
        if name in self.access.readable:
            return name
        raise ToolError(
            f"@{name} is another workspace folder, not open to this run; the user can open it for reading by "
            f"mentioning @{name}/... in the task or asking with readFolders (--read-folder {name})"
        )

    async def _foreign(
        self, tool: Tool, ctx: ToolContext, name: str, args: dict[str, Any], call: Caller
    ) -> str:
        """Run a read tool in folder `name`; its paths (in the output and in errors) come back as @name/..."""
        other = self.context(name, ctx)
        try:
            output = await call(tool, other, args)
        except _ERRORS as exc:
            raise ToolError(relabel_error(str(exc), name)) from None
        return other.redact(relabel(tool.name, _text(output), name))

    async def _every_index(self, tool: Tool, ctx: ToolContext, args: dict[str, Any], call: Caller) -> str:
        """The run's own results, then each readable folder's, each under a heading (@name/ paths)."""
        if not self.access.readable:
            return await call(tool, ctx, args)
        parts: list[str] = []
        try:
            found = _text(await call(tool, ctx, args))
        except ToolError as exc:
            found = str(exc)
        parts.append(f"In @{self.access.own_name} (this run's folder):\n{found}")
        for name in self.access.readable:
            other = self.context(name, ctx)
            if other.index is None:  # the first search there (a CLI run indexes the folder now, off the loop)
                other.index = await asyncio.to_thread(self._open_index, self.access.others[name])
            if other.index is None:
                parts.append(
                    f"In @{name}: no index is loaded for this folder; use search_text with path='@{name}'"
                )
                continue
            try:
                found = _text(await call(tool, other, args))
            except ToolError as exc:
                found = str(exc)
            parts.append(f"In @{name} (read-only):\n" + other.redact(relabel(tool.name, found, name)))
        return "\n\n".join(parts)

    def _refuse_writes(self, tool: Tool, args: dict[str, Any]) -> None:
        """ToolError when a tool other than the read tools names a path in another folder."""
        for key, value in args.items():
            if not (key == "path" or key.endswith(("_path", "file"))) or not isinstance(value, str):
                continue
            found = self.access.locate(value)
            if found is not None:
                raise ToolError(
                    f"{value}: is in the workspace folder @{found[0]}, which this run may only read; {tool.name} "
                    f"was refused and nothing was written. Edits stay in this run's own folder "
                    f"@{self.access.own_name}: change a file there, or tell the user what to change in "
                    f"@{found[0]} (an ask in that folder can make the change)"
                )

    def context(self, name: str, ctx: ToolContext) -> ToolContext:
        """The read-only tool context of folder `name` (built once per run)."""
        other = self._contexts.get(name)
        if other is None:
            root = self.access.others[name]
            overlay = self.overlay_for(root) if self.overlay_for else None
            if overlay is None:
                overlay = Overlay(root, max_file_size=getattr(ctx.settings, "max_file_size", None))
            other = ToolContext(
                root=root,
                overlay=overlay,
                settings=ctx.settings,
                cancel=ctx.cancel,
                limits=ctx.limits,
            )
            self._contexts[name] = other
        return other

    def _open_index(self, root: Path) -> WorkspaceIndex | None:
        """The folder's index from `index_for`, None when there is none (search_code then says so)."""
        if self.index_for is None:
            return None
        try:
            return self.index_for(root)
        except Exception:  # noqa: BLE001 - no index: search_code says so, the other tools go on
            log.exception("opening the index of %s failed", root)
            return None


def attach_folders(run: Any, router: FolderRouter) -> None:
    """Let a run read the folders of `router`: its tool calls go through the router and the model reads the folder
    note (in its first message, whatever the style or profile); a `context` event says which folders it may read."""
    access = router.access
    run.ctx.router = router
    note = access.describe()
    run.context = f"{note}\n\n{run.context}" if run.context else note
    if access.readable:
        status = "reading across folders: " + ", ".join(f"@{n} (read-only)" for n in access.readable)
        run.events.emit(
            "context",
            what="folders",
            own=access.own_name,
            readable={n: str(r) for n, r in access.read_roots.items()},
            status=f"{status}; edits stay in @{access.own_name}",
        )


def relabel(tool: str, text: str, name: str) -> str:
    """A read tool's output from folder `name` with its paths written as @name/..."""
    prefix = f"@{name}/"
    if tool == "list_files":
        lines = text.split("\n")
        if len(lines) == 1 and text.startswith("No files match"):
            return re.sub(
                r" in (the workspace root|\S+?)(?=[.;])",
                lambda m: " in " + _at(name, m.group(1)),
                text,
                count=1,
            )
        if len(lines) == 1 and text.endswith(" is empty (or all its files are ignored)."):
            where = text.removesuffix(" is empty (or all its files are ignored).")
            return f"{_at(name, where)} is empty (or all its files are ignored)."
        return "\n".join(line if line.startswith("[") else prefix + line for line in lines)
    if tool == "search_text":
        if text.startswith("No matches for"):
            return text.replace("in the workspace.", f"in @{name}.")
        return _HIT_LINE.sub(lambda m: prefix + m.group(0), text)
    if tool == "get_file_info":
        return re.sub(
            r"^path: (.*)$", lambda m: "path: " + _joined(name, m.group(1)), text, count=1, flags=re.M
        )
    if tool == "read_file":
        return re.sub(r"^\((\S.*) is empty\)$", lambda m: f"({_joined(name, m.group(1))} is empty)", text)
    if tool == "search_code":
        text = _CODE_HEADER.sub(lambda m: m.group(1) + prefix, text)
        return re.sub(r"read_file (\S+) to see", lambda m: f"read_file {prefix}{m.group(1)} to see", text)
    if tool == "find_symbol":
        return _SYMBOL_LINE.sub(lambda m: m.group(1) + prefix, text)
    return text


def relabel_error(message: str, name: str) -> str:
    """An error from folder `name` naming its paths as @name/... (and the folder instead of 'the workspace')."""
    head, sep, tail = message.partition(": ")
    if sep and head and " " not in head and ("/" in head or "." in head) and not head.startswith("@"):
        message = f"{_joined(name, head)}: {tail}"
    else:
        message = f"in @{name}: {message}"
    return message.replace("the workspace root", f"the root of @{name}")


def _at(name: str, where: str) -> str:
    """A place named in a message of folder `name` ('the workspace root' or a path) as @name/..."""
    return _joined(name, "." if where == "the workspace root" else where)


def _joined(name: str, rel: str) -> str:
    return f"@{name}" if rel in (".", "") else f"@{name}/{rel}"


def _text(output: Any) -> str:
    return output if isinstance(output, str) else "" if output is None else str(output)


__all__ = ["FolderRouter", "attach_folders", "relabel", "relabel_error"]
