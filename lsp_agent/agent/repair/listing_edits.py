"""A reply that writes numbered code lines back with some changed, read as an edit (small profile, prompt mode).

Shown code as numbered lines ("454:     n = fmt.format(value)"), a small model often answers with the lines again,
a few of them changed, instead of a SEARCH/REPLACE block. When most of the reply's numbered lines equal the file's
lines of the same number (spacing aside), the lines that differ are the edit: it becomes an edit_file call from the
file's lines to the reply's (at the file's indentation), widened until it matches one place in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lsp_agent.agent.model.parsing import ToolCall

EDIT_TOOL = "edit_file"
MIN_LINES = 2  # numbered lines a reply needs before it is read as a listing
MIN_AGREEMENT = 0.5  # the share of them that must equal the file's line of the same number
_NUMBERED = re.compile(r"^(?:[\w./-]+\.py:)?(\d+): ?(.*)$")  # "454: text", or "pkg/mod.py:454: text"
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.py)\b")
_FENCE = re.compile(r"^\s*```")


def listing_edit(text: str, read: Callable[[str], str | None], candidates: list[str]) -> ToolCall | None:
    """The edit_file call a reply's changed numbered lines make, against the file they agree with (a path the
    reply names, else a candidate); None when the reply is no such listing or changes nothing."""
    numbered: dict[int, str] = {}
    for line in text.splitlines():
        if (match := _NUMBERED.match(line)) and not _FENCE.match(match.group(2)):
            numbered.setdefault(int(match.group(1)), match.group(2))
    if len(numbered) < MIN_LINES:
        return None
    named = [m.group(1) for m in _PATH.finditer(text)]
    for path in dict.fromkeys([*named, *candidates]):
        content = read(path)
        if content is None:
            continue
        lines = content.splitlines()
        inside = {n: t for n, t in numbered.items() if n <= len(lines)}
        same = [n for n, t in inside.items() if lines[n - 1].strip() == t.strip()]
        if len(same) < MIN_AGREEMENT * len(numbered):
            continue
        changed = sorted(n for n in inside if n not in same)
        return _edit(path, content, lines, inside, changed[0], changed[-1]) if changed else None
    return None


def _at_file_indent(line: str, file_line: str) -> str:
    """The reply's line at the indentation of the file's line it replaces (a small model's spacing drifts)."""
    return file_line[: len(file_line) - len(file_line.lstrip())] + line.strip() if line.strip() else ""


def _edit(path: str, content: str, lines: list[str], numbered: dict[int, str], lo: int, hi: int) -> ToolCall:
    """edit_file replacing lines lo..hi by the reply's, with unchanged lines around until the old text is unique."""
    while True:
        old = "\n".join(lines[lo - 1 : hi])
        if content.count(old) <= 1 or (lo == 1 and hi == len(lines)):
            break
        lo, hi = max(1, lo - 1), min(len(lines), hi + 1)
    new = "\n".join(
        _at_file_indent(numbered[n], lines[n - 1]) if n in numbered else lines[n - 1]
        for n in range(lo, hi + 1)
    )
    return ToolCall(EDIT_TOOL, {"path": path, "old_text": old, "new_text": new})
