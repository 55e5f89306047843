"""Line hunks between a base text and a new text, and rebasing them onto a document the user edited since."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

# LSP line breaks are \n, \r\n and \r only (str.splitlines also breaks on \x0c, \u2028, ...).
_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+", re.S)


@dataclass(frozen=True)
class Hunk:
    """Replace base lines [start, end) (0-based, end exclusive) by `new_lines` (each keeps its line ending)."""

    start: int
    end: int
    new_lines: tuple[str, ...]

    @property
    def new_text(self) -> str:
        """The replacement text."""
        return "".join(self.new_lines)

    def shifted(self, delta: int) -> Hunk:
        """The same hunk moved by `delta` lines."""
        return Hunk(self.start + delta, self.end + delta, self.new_lines)

    def describe(self) -> str:
        """Human form of the base line range, 1-based ("lines 3-5", "after line 7")."""
        if self.start == self.end:
            return f"after line {self.start}" if self.start else "at the top"
        if self.end - self.start == 1:
            return f"line {self.start + 1}"
        return f"lines {self.start + 1}-{self.end}"


@dataclass(frozen=True)
class Refusal:
    """A hunk that no longer applies because the user changed the lines it touches."""

    path: str
    hunk: Hunk

    def message(self) -> str:
        """What the user reads."""
        return (
            f"{self.path}: the agent's change to {self.hunk.describe()} was refused: those lines were edited "
            "after the agent read them (ask again to redo it on the new text)"
        )


@functools.lru_cache(maxsize=16)
def split_lines(text: str) -> tuple[str, ...]:
    """Lines with their endings kept, split the way LSP counts lines ("a\\nb" -> ("a\\n", "b")).

    Cached: code actions on a large open document must not re-split it on every request.
    """
    return tuple(_LINE.findall(text))


def compute_hunks(base_text: str, new_text: str) -> list[Hunk]:
    """The minimal line hunks turning base_text into new_text."""
    base, new = split_lines(base_text), split_lines(new_text)
    matcher = difflib.SequenceMatcher(None, base, new, autojunk=False)
    return [
        Hunk(i1, i2, tuple(new[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _line_offsets(base: tuple[str, ...], current: tuple[str, ...]) -> dict[int, int]:
    """base line index -> current line index, for lines the user left untouched."""
    matcher = difflib.SequenceMatcher(None, base, current, autojunk=False)
    mapping: dict[int, int] = {}
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            mapping[a + k] = b + k
    return mapping


def rebase_hunks(
    path: str, base_text: str, current_text: str, hunks: list[Hunk]
) -> tuple[list[Hunk], list[Refusal]]:
    """Move hunks made against base_text onto current_text.

    A hunk applies cleanly when the lines it replaces and one line of context on each side are untouched in
    current_text (and stayed contiguous); it is then shifted to their new place. Other hunks are refused.
    """
    if base_text == current_text:
        return list(hunks), []
    base, current = split_lines(base_text), split_lines(current_text)
    mapping = _line_offsets(base, current)
    rebased: list[Hunk] = []
    refused: list[Refusal] = []
    for hunk in hunks:
        lo, hi = max(0, hunk.start - 1), min(len(base), hunk.end + 1)
        deltas = {mapping[i] - i if i in mapping else None for i in range(lo, hi)}
        if lo == hi:  # empty base: only a still-empty document can take the hunk
            deltas = {None if current else 0}
        if None in deltas or len(deltas) != 1:
            refused.append(Refusal(path, hunk))
            continue
        delta = deltas.pop()
        if hunk.end == len(base) and hunk.end + delta != len(current):
            refused.append(Refusal(path, hunk))  # the user appended after the hunk's end-of-file anchor
            continue
        if hunk.start == 0 and delta != 0:
            refused.append(Refusal(path, hunk))  # the user inserted above a top-of-file hunk
            continue
        rebased.append(hunk.shifted(delta))
    return rebased, refused


def apply_hunks(text: str, hunks: list[Hunk]) -> str:
    """The text with the (non-overlapping) hunks applied; used to check rebased results."""
    lines = list(split_lines(text))
    for hunk in sorted(hunks, key=lambda h: h.start, reverse=True):
        lines[hunk.start : hunk.end] = list(hunk.new_lines)
    return "".join(lines)
