"""Line hunks between a base text and a new text, the line matching behind them, and refusals (see rebase.py)."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

# LSP line breaks are \n, \r\n and \r only (str.splitlines also breaks on \x0c, \u2028, ...).
_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+", re.S)
# Above this many differing lines, line matching uses difflib's popular-line heuristic (see matching_blocks).
EXACT_DIFF_LINES = 500


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

    Cached: code actions on a large open document must not re-split it on every request. str.splitlines (C, ~5x
    faster than the regex) gives the same lines unless the text holds one of the other breaks it knows (form feed,
    NEL, U+2028, ...): then it makes more lines than LSP counts, and the regex splits instead.
    """
    lines = text.splitlines(keepends=True)
    breaks = text.count("\n")
    if "\r" in text:
        breaks += text.count("\r") - text.count("\r\n")
    if len(lines) == breaks + (1 if text and not text.endswith(("\n", "\r")) else 0):
        return tuple(lines)
    return tuple(_LINE.findall(text))


def matching_blocks(a: tuple[str, ...], b: tuple[str, ...]) -> list[tuple[int, int, int]]:
    """Runs (i, j, size) of equal lines in a and b, in order (like SequenceMatcher.get_matching_blocks).

    The common head and tail are matched first, so a small edit in a large file only diffs the lines between.
    When that middle is still large, difflib's popular-line heuristic keeps it fast (blank lines repeated
    thousands of times make the exact matcher quadratic: ~0.5 s on a 5,000-line file).
    """
    head = common_head(a, b)
    tail = common_tail(a, b, min(len(a), len(b)) - head)
    blocks = [(0, 0, head)] if head else []
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if mid_a and mid_b:
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=len(mid_b) > EXACT_DIFF_LINES)
        blocks += [(i + head, j + head, n) for i, j, n in matcher.get_matching_blocks() if n]
    if tail:
        blocks.append((len(a) - tail, len(b) - tail, tail))
    return blocks


def common_head(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many leading lines a and b share.

    A binary search over slice comparisons, which run in C: a keystroke's re-alignment of a 5,000-line file
    otherwise spends most of its time comparing equal lines one by one in Python.
    """
    # a[:lo] == b[:lo], and the common head is no longer than hi
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_tail(a: tuple[str, ...], b: tuple[str, ...], limit: int) -> int:
    """How many trailing lines a and b share, at most `limit` (the lines left after their common head)."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def compute_hunks(base_text: str, new_text: str) -> list[Hunk]:
    """The minimal line hunks turning base_text into new_text."""
    base, new = split_lines(base_text), split_lines(new_text)
    hunks: list[Hunk] = []
    i = j = 0
    for a, b, size in [*matching_blocks(base, new), (len(base), len(new), 0)]:
        if i < a or j < b:
            hunks.append(Hunk(i, a, tuple(new[j:b])))
        i, j = a + size, b + size
    return hunks


def apply_hunks(text: str, hunks: list[Hunk]) -> str:
    """The text with the (non-overlapping) hunks applied; used to check rebased results."""
    lines = list(split_lines(text))
    for hunk in sorted(hunks, key=lambda h: h.start, reverse=True):
        lines[hunk.start : hunk.end] = list(hunk.new_lines)
    return "".join(lines)
