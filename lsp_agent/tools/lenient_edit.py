"""A forgiving edit_file for small models: the two slips they make most are repaired instead of refused.

- old_text copied with read_file's line-number prefixes ("226:     if x:"), or from the code shown up front with
  its docstring markers: the prefixes are dropped from old_text and new_text, the markers become the docstring;
- old_text whose indentation or spacing at line ends is off: when exactly one run of lines of the file equals it
  line by line apart from leading and trailing whitespace, that run is replaced, and new_text is moved to the
  file's indentation (its own relative indentation kept);
- one line of old_text that matches inside a deeper-indented line: new_text's further lines are indented by the
  difference too, instead of landing at the wrong depth;
- lines copied from a traceback into old_text and new_text (pytest's `^^^^` markers, `E   ` error lines) are
  dropped;
- old_text that matches several places, only one of them inside the code shown up front: that one is edited.
The observation says which repair was made; anything else fails as before (closest candidates shown).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

_PREFIXED = re.compile(r"^\s*(?:[\w./-]+\.py:)?(\d+): ?(.*)$")  # "226: text", or "pkg/mod.py:226: text"
# how the code up front shows a long docstring (agent/repair/upfront.py): "206-224: [docstring, 19 more lines]"
_DOCSTRING_MARKER = re.compile(r"^\s*(\d+)-(\d+): \[docstring, \d+ more lines?\]\s*$")
# ToolContext.extras key: {path: [(first, last line)]} of the code shown to the model up front (agent/repair/upfront.py)
SHOWN_CODE = "shown_code"
# what a traceback adds around a code line: "    ^^^^^^^^", "    ~~~~^^^", "E   KeyError: 1"
_TRACEBACK_LINE = re.compile(r"^\s*[~^]+\s*$|^E {3}")


def from_shown_code(text: str, file_lines: list[str], *, check: bool) -> str | None:
    """`text` copied from numbered code as shown to the model, made plain: 'N: ' prefixes dropped and docstring
    markers replaced by the file's lines; None when there was nothing to repair. With `check`, prefixes count only
    when some prefixed line equals the file's line N (so a dict literal `1: "st",` is left alone)."""
    lines = text.splitlines()
    prefixed = [(i, m) for i, line in enumerate(lines) if (m := _PREFIXED.match(line))]
    markers = [m for line in lines if (m := _DOCSTRING_MARKER.match(line))]
    if check and not markers and not _agrees(prefixed, file_lines):
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


def _agrees(prefixed: list[tuple[int, re.Match[str]]], file_lines: list[str]) -> bool:
    """True when the prefixed lines are the file's: one equals the file's line of its number, or, numbers aside
    (a model miscounts), the first prefixed line's text is a line of the file."""
    agree = [m for _, m in prefixed if 0 < int(m.group(1)) <= len(file_lines)]
    if any(file_lines[int(m.group(1)) - 1].strip() == m.group(2).strip() for m in agree):
        return True
    first = prefixed[0][1].group(2).strip() if prefixed else ""
    return bool(first) and any(line.strip() == first for line in file_lines)


def without_traceback_lines(text: str) -> str | None:
    """`text` without the lines a traceback adds around code (`^^^^` markers, `E   ...`); None when it has none."""
    lines = text.splitlines()
    kept = [line for line in lines if not _TRACEBACK_LINE.match(line)]
    return "\n".join(kept) if len(kept) < len(lines) and any(line.strip() for line in kept) else None


def deeper_indentation(text: str, old_text: str, new_text: str) -> str | None:
    """new_text indented for a one-line old_text that matches (once) inside a deeper-indented line of `text`: its
    lines after the first get the extra indentation too; None when that is not the case."""
    if "\n" in old_text.strip("\n") or "\n" not in new_text.strip("\n") or text.count(old_text) != 1:
        return None
    at = text.index(old_text)
    extra = text[text.rfind("\n", 0, at) + 1 : at]
    if not extra or extra.strip():
        return None
    first, *rest = new_text.split("\n")
    return "\n".join([first, *(extra + line if line.strip() else line for line in rest)])


def one_place(
    text: str, old_text: str, new_text: str, shown: list[tuple[int, int]]
) -> tuple[str, str] | None:
    """(old, new) widened with the lines around the one place old_text occurs inside the code shown to the model
    (line ranges), so that it matches only there; None when no single occurrence lies inside what was shown."""
    starts = [m.start() for m in re.finditer(re.escape(old_text), text)] if old_text else []
    inside = [p for p in starts if any(lo <= text.count("\n", 0, p) + 1 <= hi for lo, hi in shown)]
    if len(starts) < 2 or len(inside) != 1:
        return None
    at, end = inside[0], inside[0] + len(old_text)
    lines = text.splitlines(keepends=True)
    first, last = text.count("\n", 0, at), text.count("\n", 0, max(at, end - 1))
    for extra in range(1, len(lines)):
        lo, hi = max(0, first - extra), min(len(lines), last + 1 + extra)
        start, stop = sum(map(len, lines[:lo])), sum(map(len, lines[:hi]))
        if text.count(text[start:stop]) == 1:
            return text[start:stop], text[start:at] + new_text + text[end:stop]
    return None


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


def _repairs(
    text: str, old_text: str, new_text: str, shown: list[tuple[int, int]]
) -> Iterator[tuple[str, str, str]]:
    """(old_text, new_text, note) to try in turn, each repair building on the ones before it."""
    if (widened := one_place(text, old_text, new_text, shown)) is not None:
        yield (
            widened[0],
            widened[1],
            "old_text matched several places; the one in the code shown to you was edited",
        )
    if (cleaned := without_traceback_lines(old_text)) is not None:
        old_text, new_text = cleaned, without_traceback_lines(new_text) or new_text
        yield old_text, new_text, "the traceback lines (^^^^, E ...) in old_text/new_text were left out"
    lines = text.splitlines()
    if (stripped := from_shown_code(old_text, lines, check=True)) is not None:
        old_text, new_text = stripped, from_shown_code(new_text, lines, check=False) or new_text
        yield old_text, new_text, "the line-number prefixes in old_text/new_text were left out"
    if (fixed := loose_match(text, old_text, new_text)) is not None:
        yield fixed[0], fixed[1], "old_text matched the file apart from its indentation; the file's is kept"


def _lenient(tool: Tool) -> Tool:
    """edit_file that repairs line-number prefixes, traceback lines and indentation slips, saying so."""
    original = tool.function

    def run(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
        text = proposal_text(ctx, path)
        note = ""
        if text is not None and (deeper := deeper_indentation(text, old_text, new_text)) is not None:
            new_text, note = (
                deeper,
                "\nNote: new_text was indented to the depth of the line old_text matched.",
            )
        try:
            return original(ctx, path=path, old_text=old_text, new_text=new_text) + note
        except ToolError as first_error:
            if text is None:
                raise first_error from None
            shown = ctx.extras.get(SHOWN_CODE, {}).get(ctx.overlay.normalize(path), [])
            for old, new, said in _repairs(text, old_text, new_text, shown):
                try:
                    return original(ctx, path=path, old_text=old, new_text=new) + f"\nNote: {said}."
                except ToolError:
                    continue
            raise first_error from None

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def proposal_text(ctx: ToolContext, path: str) -> str | None:
    """The proposal's text of `path`, or None when it is not a readable file (or outside the workspace, a secret)."""
    try:
        key = ctx.overlay.normalize(path)
        return ctx.overlay.read_text(key) if ctx.overlay.is_file(key) else None
    except (ValueError, OSError):
        return None


def make_edits_lenient(registry: ToolRegistry) -> bool:
    """Replace edit_file with the forgiving version; False when there is no (plain) edit_file."""
    tool = registry.get("edit_file")
    if tool is None:
        return False
    registry.register(_lenient(tool), replace=True)
    return True
