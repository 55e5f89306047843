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

    Cached: code actions on a large open document must not re-split it on every request.
    """
    return tuple(_LINE.findall(text))


def matching_blocks(a: tuple[str, ...], b: tuple[str, ...]) -> list[tuple[int, int, int]]:
    """Runs (i, j, size) of equal lines in a and b, in order (like SequenceMatcher.get_matching_blocks).

    The common head and tail are matched first, so a small edit in a large file only diffs the lines between.
    When that middle is still large, difflib's popular-line heuristic keeps it fast (blank lines repeated
    thousands of times make the exact matcher quadratic: ~0.5 s on a 5,000-line file).
    """
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    blocks = [(0, 0, head)] if head else []
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if mid_a and mid_b:
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=len(mid_b) > EXACT_DIFF_LINES)
        blocks += [(i + head, j + head, n) for i, j, n in matcher.get_matching_blocks() if n]
    if tail:
        blocks.append((len(a) - tail, len(b) - tail, tail))
    return blocks


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
