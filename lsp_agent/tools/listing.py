"""The run's view of the workspace tree: the ignore-aware walk plus the overlay's created and deleted files."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lsp_agent.tools.patterns import compile_glob
from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.workspace.secrets import SecretFiles
from lsp_agent.workspace.walk import walk_entries

_SEARCHED = object()  # visible_entries' default: leave out the secret files of ctx


def sort_key(rel: str) -> tuple[str, ...]:
    """Order paths the way the walk does: component by component."""
    return tuple(rel.split("/"))


def visible_entries(
    ctx: ToolContext,
    base: str = ".",
    *,
    include_dirs: bool = True,
    secrets: SecretFiles | None | object = _SEARCHED,
) -> dict[str, bool]:
    """rel path -> is_dir for everything under `base` in this run's view, sorted like the walk.

    Secret files are left out unless `secrets` is None (list_files shows their names, marked).
    """
    prefix = "" if base == "." else base + "/"
    entries: dict[str, bool] = {}
    cancel = ctx.cancel
    hidden = ctx.secret_files if secrets is _SEARCHED else secrets
    walk = walk_entries(
        ctx.root, exclude=ctx.exclude, include_dirs=include_dirs, under=prefix, secrets=hidden
    )
    for rel, is_dir in walk:
        if cancel is not None and cancel.is_set():
            raise ToolError("cancelled")
        entries[rel] = is_dir
    overlay = ctx.overlay
    for rel in overlay.deleted_paths():
        entries.pop(rel, None)
    for rel in overlay.created_paths() + [p for p in overlay.changed_paths() if overlay.is_file(p)]:
        if not rel.startswith(prefix) or (hidden is not None and hidden.is_secret(rel)):
            continue
        entries[rel] = False
        if include_dirs:
            parts = rel.split("/")
            for i in range(len(base.split("/")) if prefix else 0, len(parts) - 1):
                parent = "/".join(parts[: i + 1])
                if parent.startswith(prefix):
                    entries.setdefault(parent, True)
    return dict(sorted(entries.items(), key=lambda item: sort_key(item[0])))


def visible_files(ctx: ToolContext, base: str = ".") -> list[str]:
    """Sorted rel paths of the files under `base` in this run's view."""
    return [rel for rel, is_dir in visible_entries(ctx, base, include_dirs=False).items() if not is_dir]


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> Any:
    """Compile a glob (`*`, `?`, `[abc]`, `{a,b}`, `**` for any number of directories) to a full-match regex."""
    segments = [s for s in pattern.strip().strip("/").split("/") if s not in ("", ".")]
    if not segments:
        raise ToolError(f"empty glob pattern {pattern!r}; try '**/*' or '*.py'")
    parts: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment_regex(segment) + ("" if last else "/"))
    return compile_glob("".join(parts), pattern)


def _segment_regex(segment: str) -> str:
    """One path segment of a glob as a regex (never crossing '/')."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            end = segment.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = segment[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_segment_regex(o) for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
