"""Other agents' tool and parameter names, accepted for ours: the seeds' tools and the names models are trained on.

A call by another name runs the tool it means, and its observation starts with a note naming the canonical tool and
parameters, so the model uses them from then on. A parameter is renamed only when the tool has no parameter of the
alias's own name and its canonical parameter is not given too; seed 001's read_file window (`offset`, `limit`)
becomes start_line and end_line.
"""

from __future__ import annotations

import json
from typing import Any

# other agents' tool name -> ours
TOOL_ALIASES = {
    "list_dir": "list_files",  # seed 002
    "listFiles": "list_files",
    "glob": "list_files",
    "readFile": "read_file",
    "search": "search_text",
    "searchText": "search_text",
    "grep": "search_text",
    "replace": "edit_file",  # seed 002
    "replaceText": "edit_file",
    "str_replace": "edit_file",
    "writeFile": "write_file",
    "execute_code": "run_python",  # seeds 001 and 003
}

# other agents' parameter name -> ours
PARAMETER_ALIASES = {
    "file_path": "path",  # seeds 000 and 001
    "filePath": "path",
    "filepath": "path",
    "file": "path",
    "searchPath": "path",
    "directory": "path",
    "old_string": "old_text",
    "oldString": "old_text",
    "old_str": "old_text",
    "new_string": "new_text",
    "newString": "new_text",
    "new_str": "new_text",
    "startLine": "start_line",
    "endLine": "end_line",
    "isRegex": "regex",
    "caseSensitive": "case_sensitive",
    "query": "pattern",
}


def canonical_tool(name: str) -> str | None:
    """Our name for another agent's tool name, or None."""
    return TOOL_ALIASES.get(name) or TOOL_ALIASES.get(name.strip().rsplit(".", 1)[-1].strip())


def canonical_arguments(
    schema: dict[str, Any], arguments: dict[str, Any] | str | None
) -> tuple[dict[str, Any] | str | None, dict[str, str]]:
    """(arguments with aliased parameter names renamed to the tool's own, {alias: canonical} of those renamed)."""
    parsed = arguments
    if isinstance(arguments, str) and arguments.strip().startswith("{"):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments, {}  # validation says what is wrong with it
    if not isinstance(parsed, dict):
        return arguments, {}
    props = schema.get("properties") or {}
    renamed: dict[str, str] = {}
    for key in list(parsed):
        target = PARAMETER_ALIASES.get(key)
        if key in props or target is None or target not in props or target in parsed:
            continue
        renamed[key] = target
    clean = {renamed.get(key, key): value for key, value in parsed.items()}
    renamed.update(_line_window(props, clean))
    if not renamed:
        return arguments, {}
    return clean, renamed


def _line_window(props: dict[str, Any], args: dict[str, Any]) -> dict[str, str]:
    """Seed 001's read_file `offset` (the first line) and `limit` (how many lines) as start_line and end_line, in
    place; {alias: what it became} of those converted."""
    if "start_line" not in props or "end_line" not in props or "offset" in props or "limit" in props:
        return {}
    offset, limit = args.get("offset"), args.get("limit")
    if not _whole(offset, limit) or ("start_line" in args and offset is not None):
        return {}
    converted: dict[str, str] = {}
    if offset is not None:
        args["start_line"] = max(1, int(offset))
        converted["offset"] = "start_line"
    if limit is not None and "end_line" not in args:
        args["end_line"] = int(args.get("start_line") or 1) + max(1, int(limit)) - 1
        converted["limit"] = "end_line (start_line + limit - 1)"
    for key in converted:
        del args[key]
    return converted


def _whole(*values: Any) -> bool:
    """True when every value given is a whole number (or a string of one)."""
    return all(
        v is None or (not isinstance(v, bool) and str(v).strip().lstrip("+-").isdigit()) for v in values
    )


def alias_note(called: str, tool: str, renamed: dict[str, str], schema: dict[str, Any]) -> str:
    """The note an observation starts with when the call used other names ('' when it used ours)."""
    if called == tool and not renamed:
        return ""
    props = ", ".join(schema.get("properties") or {}) or "none"
    parts = []
    if called != tool:
        parts.append(f"`{called}` is called `{tool}` here")
    if renamed:
        pairs = ", ".join(f"`{alias}` is `{ours}`" for alias, ours in renamed.items())
        its = "its parameter " if len(renamed) == 1 else "its parameters "
        parts.append(its + pairs if called == tool else pairs)
    return f"[Note: {'; '.join(parts)}. Call {tool} with its own parameters ({props}) from now on.]\n"
