"""A forgiving edit_file for small models: the two slips they make most are repaired instead of refused.

- old_text copied with read_file's line-number prefixes ("226:     if x:"): the prefixes are dropped from old_text
  and new_text;
- old_text of one line whose indentation is off: when exactly one line of the file equals it apart from leading
  and trailing whitespace, that line is replaced, and new_text gets the file's indentation.
The observation says which repair was made; anything else fails as before (closest candidates shown).
"""

from __future__ import annotations

import re

from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

_NUMBERED = re.compile(r"^\s*\d+: ?", re.M)


def strip_line_numbers(text: str) -> str | None:
    """`text` without 'N: ' prefixes when every non-empty line has one, else None."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not all(_NUMBERED.match(line) for line in lines):
        return None
    return _NUMBERED.sub("", text)


def reindent(text: str, old_text: str, new_text: str) -> tuple[str, str] | None:
    """(old, new) matching the file's single line equal to old_text but for surrounding whitespace, or None."""
    wanted = old_text.strip()
    if not wanted or "\n" in wanted:
        return None
    matches = [line for line in text.splitlines() if line.strip() == wanted]
    if len(matches) != 1 or matches[0] == old_text:
        return None
    line = matches[0]
    indent = line[: len(line) - len(line.lstrip())]
    lines = new_text.strip("\n").splitlines() or [""]
    first = lines[0].lstrip()
    base = len(lines[0]) - len(first)
    rest = [indent + (part[base:] if part[:base].strip() == "" else part.lstrip()) for part in lines[1:]]
    return line, "\n".join([indent + first, *rest])


def _lenient(tool: Tool) -> Tool:
    """edit_file that repairs line-number prefixes and one-line indentation slips, saying so."""
    original = tool.function

    def run(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
        try:
            return original(ctx, path=path, old_text=old_text, new_text=new_text)
        except ToolError as first_error:
            stripped = strip_line_numbers(old_text)
            if stripped is not None:
                new_stripped = strip_line_numbers(new_text) or new_text
                try:
                    output = original(ctx, path=path, old_text=stripped, new_text=new_stripped)
                except ToolError:
                    old_text, new_text = stripped, new_stripped
                else:
                    return output + "\nNote: the line-number prefixes in old_text/new_text were left out."
            key = ctx.overlay.normalize(path)
            if not ctx.overlay.is_file(key):
                raise first_error from None
            fixed = reindent(ctx.overlay.read_text(key), old_text, new_text)
            if fixed is None:
                raise first_error from None
            output = original(ctx, path=path, old_text=fixed[0], new_text=fixed[1])
            return (
                output + "\nNote: old_text matched one line apart from its indentation; the file's is kept."
            )

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def make_edits_lenient(registry: ToolRegistry) -> bool:
    """Replace edit_file with the forgiving version; False when there is no (plain) edit_file."""
    tool = registry.get("edit_file")
    if tool is None:
        return False
    registry.register(_lenient(tool), replace=True)
    return True
