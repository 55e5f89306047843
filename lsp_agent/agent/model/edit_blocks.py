"""Edits written as plain-text SEARCH/REPLACE blocks (aider's format), for small models in prompt mode.

A small model copies code far better as plain lines than inside a JSON string with escaped newlines and quotes:

    pkg/mod.py
    <<<<<<< SEARCH
        if count > limit:
    =======
        if count >= limit:
    >>>>>>> REPLACE

The block becomes an edit_file call (path, old_text, new_text). The path is the last path-like line before the
block (fences and `File:` labels allowed); without one it is left empty for the edit tool to resolve. The closing
marker may be missing where a stop sequence ended the reply, and the SEARCH marker may be written as a =======
divider (a small model's slip after being told the block's format).
"""

from __future__ import annotations

import re

from lsp_agent.agent.model.parsing import ToolCall

REPLACE_MARKER = ">>>>>>> REPLACE"
EDIT_TOOL = "edit_file"
_BLOCK = re.compile(
    r"^[ \t]*<{5,9}[ \t]*SEARCH[^\n]*\n(?P<old>.*?)^[ \t]*={5,9}[ \t]*(?:\n|\Z)(?P<new>.*?)"
    r"(?:^[ \t]*>{5,9}[ \t]*REPLACE[^\n]*$|\Z)",
    re.S | re.M,
)
# the same block with its SEARCH marker written as a divider: "=======", old lines, "=======", new lines
_DIVIDED = re.compile(
    r"^[ \t]*={5,9}[ \t]*\n(?P<old>.*?)^[ \t]*={5,9}[ \t]*(?:\n|\Z)(?P<new>.*?)"
    r"(?:^[ \t]*>{5,9}[ \t]*REPLACE[^\n]*$|\Z)",
    re.S | re.M,
)
_SEARCH = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH", re.M)
_END = re.compile(r"^[ \t]*>{5,9}[ \t]*REPLACE[^\n]*$", re.M)
_PATH = re.compile(r"([\w.-]+(?:/[\w.-]+)*\.[A-Za-z]\w*)")
_FENCE_LINE = re.compile(r"^\s*```[\w+-]*\s*$")
_OPEN_ACTION = re.compile(r"<?ACTION>|&lt;ACTION&gt;", re.I)


_ANY_MARKER = re.compile(r"^[ \t]*(?:<{5,9}[ \t]*SEARCH|={5,9}[ \t]*$|>{5,9}[ \t]*REPLACE)", re.M)
INCOMPLETE = (
    "the SEARCH/REPLACE block is incomplete: after the SEARCH lines write a line =======, then the new lines, "
    "then >>>>>>> REPLACE"
)


def incomplete_block(text: str) -> bool:
    """True when the text has a block's marker lines but no complete block (SEARCH, ======= and the new lines)."""
    return _ANY_MARKER.search(text) is not None and _find_block(text) is None


def parse_edit_block(text: str) -> tuple[str, ToolCall] | None:
    """(thought, edit_file call) of the first SEARCH/REPLACE block in `text`, or None when there is none or an
    <ACTION> comes first."""
    match = _find_block(text)
    if match is None:
        return None
    action = _OPEN_ACTION.search(text)
    if action is not None and action.start() < match.start():
        return None
    before = text[: match.start()]
    path, thought = _path_and_thought(before)
    old = _strip_fence_end(match.group("old"))
    new = _strip_fence_end(match.group("new"))
    call = ToolCall(EDIT_TOOL, {"path": path, "old_text": old, "new_text": new})
    return thought, call


def end_of_first_block(text: str) -> int:
    """The index just after the first block's REPLACE marker, or -1 when the text has no complete block."""
    match = _find_block(text)
    if match is None:
        return -1
    end = _END.search(text, match.start())
    return end.end() if end is not None and end.end() <= match.end() else -1


def close_cut_block(text: str) -> str:
    """A reply that a stop sequence ended inside its block, with the REPLACE marker put back."""
    match = _find_block(text)
    if match is None or end_of_first_block(text) >= 0:
        return text
    return text.rstrip("\n") + "\n" + REPLACE_MARKER


def _find_block(text: str) -> re.Match[str] | None:
    """The first block; without a SEARCH marker, one whose SEARCH marker is a second ======= divider."""
    if (match := _BLOCK.search(text)) is not None or _SEARCH.search(text) is not None:
        return match
    return _DIVIDED.search(text)


def _path_and_thought(before: str) -> tuple[str, str]:
    """The path named on the last lines before a block, and the text before that as the thought."""
    lines = before.rstrip("\n").splitlines()
    for back in range(1, min(4, len(lines)) + 1):
        line = lines[-back]
        if not line.strip() or _FENCE_LINE.match(line):
            continue
        found = _PATH.findall(line.replace("`", " ").replace("*", " "))
        if found and len(line.strip()) <= len(found[-1]) + 12:  # a path line, not a sentence naming a file
            thought = "\n".join(lines[: len(lines) - back])
            return found[-1], _clean_thought(thought)
        break
    return "", _clean_thought(before)


def _clean_thought(text: str) -> str:
    """The reasoning before a block, without THOUGHT labels or fences."""
    text = re.sub(r"<?/?THOUGHT>|^\s*THOUGHT:\s*", "", text, flags=re.I | re.M)
    return "\n".join(line for line in text.splitlines() if not _FENCE_LINE.match(line)).strip()


def _strip_fence_end(section: str) -> str:
    """A block section without a trailing code fence line (a block cut off inside a fence)."""
    lines = section.splitlines()
    while lines and _FENCE_LINE.match(lines[-1]):
        lines.pop()
    return "\n".join(lines)
