"""A forgiving edit_file for small models: the two slips they make most are repaired instead of refused.

- old_text copied with read_file's line-number prefixes ("226:     if x:"), or from the code shown up front with
  its docstring markers: the prefixes are dropped from old_text and new_text, the markers become the docstring;
- old_text whose indentation or spacing at line ends is off: when exactly one run of lines of the file equals it
  line by line apart from leading and trailing whitespace, that run is replaced, and new_text is moved to the
  file's indentation (its own relative indentation kept).
The observation says which repair was made; anything else fails as before (closest candidates shown).
"""

from __future__ import annotations

import re

from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

_PREFIXED = re.compile(r"^\s*(\d+): ?(.*)$")
# how the code up front shows a long docstring (agent/upfront.py): "206-224: [docstring, 19 more lines]"
_DOCSTRING_MARKER = re.compile(r"^\s*(\d+)-(\d+): \[docstring, \d+ more lines?\]\s*$")


def from_shown_code(text: str, file_lines: list[str], *, check: bool) -> str | None:
    """`text` copied from numbered code as shown to the model, made plain: 'N: ' prefixes dropped and docstring
    markers replaced by the file's lines; None when there was nothing to repair. With `check`, prefixes count only
    when some prefixed line equals the file's line N (so a dict literal `1: "st",` is left alone)."""
    lines = text.splitlines()
    prefixed = [(i, m) for i, line in enumerate(lines) if (m := _PREFIXED.match(line))]
    markers = [m for line in lines if (m := _DOCSTRING_MARKER.match(line))]
    if check and not markers:
        agree = [m for _, m in prefixed if 0 < int(m.group(1)) <= len(file_lines)]
        if not any(file_lines[int(m.group(1)) - 1].strip() == m.group(2).strip() for m in agree):
            return None
    if not prefixed and not markers:
        return None
    out: list[str] = []
    for line in lines:
        if marker := _DOCSTRING_MARKER.match(line):
            out.extend(file_lines[int(marker.group(1)) - 1 : int(marker.group(2))])
        elif prefix := _PREFIXED.match(line):
            out.append(prefix.group(2))
        else:
            out.append(line)
    return "\n".join(out)


def loose_match(text: str, old_text: str, new_text: str) -> tuple[str, str] | None:
    """(old, new) for the one run of lines in `text` equal to old_text's lines apart from surrounding whitespace,
    with new_text moved to the file's indentation; None when there is no such single run (or it is exact)."""
    wanted = [line.strip() for line in old_text.strip("\n").splitlines()]
    if not any(wanted):
        return None
    lines = text.splitlines()
    size = len(wanted)
    starts = [
        i
        for i in range(len(lines) - size + 1)
        if lines[i].strip() == wanted[0] and all(lines[i + j].strip() == wanted[j] for j in range(size))
    ]
    if len(starts) != 1:
        return None
    found = "\n".join(lines[starts[0] : starts[0] + size])
    if found == old_text:
        return None
    first_old = old_text.strip("\n").splitlines()[0]
    old_indent = first_old[: len(first_old) - len(first_old.lstrip())]
    indent = found[: len(found) - len(found.lstrip())]
    moved = []
    for part in new_text.strip("\n").splitlines() or [""]:
        if not part.strip():
            moved.append("")
        elif part.startswith(old_indent):
            moved.append(indent + part[len(old_indent) :])
        else:
            moved.append(indent + part.lstrip())
    return found, "\n".join(moved)


def _lenient(tool: Tool) -> Tool:
    """edit_file that repairs line-number prefixes and indentation slips, saying so."""
    original = tool.function

    def run(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
        try:
            return original(ctx, path=path, old_text=old_text, new_text=new_text)
        except ToolError as first_error:
            key = ctx.overlay.normalize(path)
            if not ctx.overlay.is_file(key):
                raise first_error from None
            text = ctx.overlay.read_text(key)
            stripped = from_shown_code(old_text, text.splitlines(), check=True)
            if stripped is not None:
                new_stripped = from_shown_code(new_text, text.splitlines(), check=False) or new_text
                try:
                    output = original(ctx, path=path, old_text=stripped, new_text=new_stripped)
                except ToolError:
                    old_text, new_text = stripped, new_stripped
                else:
                    return output + "\nNote: the line-number prefixes in old_text/new_text were left out."
            fixed = loose_match(text, old_text, new_text)
            if fixed is None:
                raise first_error from None
            output = original(ctx, path=path, old_text=fixed[0], new_text=fixed[1])
            return (
                output + "\nNote: old_text matched the file apart from its indentation; the file's is kept."
            )

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def make_edits_lenient(registry: ToolRegistry) -> bool:
    """Replace edit_file with the forgiving version; False when there is no (plain) edit_file."""
    tool = registry.get("edit_file")
    if tool is None:
        return False
    registry.register(_lenient(tool), replace=True)
    return True
