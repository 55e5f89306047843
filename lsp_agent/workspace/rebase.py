"""Rebasing a proposal's hunks onto the text the user has now, cheaply enough for every code action."""

from __future__ import annotations

import bisect

from lsp_agent.workspace.hunks import Hunk, Refusal, apply_hunks, matching_blocks, split_lines

Block = tuple[int, int, int]  # (line in a, line in b, number of equal lines)


class LineMap:
    """base line index -> current line index for the lines the user left untouched, from matching blocks."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.starts = [a for a, _, _ in blocks]

    def offset(self, line: int) -> int | None:
        """How far an untouched base line moved (None when the user changed or removed it)."""
        k = bisect.bisect_right(self.starts, line) - 1
        if k < 0:
            return None
        a, b, size = self.blocks[k]
        return b - a if line < a + size else None

    def nearby_offsets(self, lo: int, hi: int) -> list[int]:
        """The offsets of the nearest untouched runs before `lo` and from `hi` on (where lines [lo, hi) would be)."""
        out: list[int] = []
        k = bisect.bisect_right(self.starts, lo) - 1
        if k >= 0:
            out.append(self.blocks[k][1] - self.blocks[k][0])
        k = bisect.bisect_left(self.starts, hi)
        if k < len(self.blocks):
            out.append(self.blocks[k][1] - self.blocks[k][0])
        return out


def compose(ab: list[Block], bc: list[Block]) -> list[Block]:
    """Matching blocks a->c from blocks a->b and b->c: the lines equal in all three texts.

    bc aligns two texts a keystroke apart, so it has few blocks while ab gains one per edited line: for each
    block of bc, the blocks of ab it overlaps are found by bisection and moved in one comprehension, instead of
    walking both lists block by block in Python.
    """
    out: list[Block] = []
    for b2, c, n2 in bc:
        first = bisect.bisect_right(ab, b2, key=_block_end)  # the first ab block ending after b2
        last = bisect.bisect_left(ab, b2 + n2, key=_block_start)  # the ab blocks starting before b2 + n2
        if first >= last:
            continue
        shift = c - b2
        inner = ab[first:last]
        a, b1, n1 = inner[0]
        if b1 < b2:  # clip the ab block that starts before this bc block
            inner[0] = (a + b2 - b1, b2, n1 - (b2 - b1))
        a, b1, n1 = inner[-1]
        if b1 + n1 > b2 + n2:  # and the one that ends after it
            inner[-1] = (a, b1, b2 + n2 - b1)
        out.extend([(a, b1 + shift, n1) for a, b1, n1 in inner])
    return out


def _block_start(block: Block) -> int:
    return block[1]


def _block_end(block: Block) -> int:
    return block[1] + block[2]


def rebase_with(
    path: str, base: tuple[str, ...], current: tuple[str, ...], hunks: list[Hunk], moved: LineMap
) -> tuple[list[Hunk], list[Refusal]]:
    """Move hunks onto `current` given a line map; see rebase_hunks."""
    rebased: list[Hunk] = []
    refused: list[Refusal] = []
    for hunk in hunks:
        delta = _delta(base, current, hunk, moved)
        if delta is None or (rebased and hunk.start + delta < rebased[-1].end):
            refused.append(Refusal(path, hunk))
            continue
        if hunk.end == len(base) and hunk.end + delta != len(current):
            refused.append(Refusal(path, hunk))  # the user appended after the hunk's end-of-file anchor
            continue
        if hunk.start == 0 and delta != 0:
            refused.append(Refusal(path, hunk))  # the user inserted above a top-of-file hunk
            continue
        rebased.append(hunk.shifted(delta))
    return rebased, refused


def _delta(base: tuple[str, ...], current: tuple[str, ...], hunk: Hunk, moved: LineMap) -> int | None:
    """How far the hunk moved: its lines and one line of context each side must be intact and contiguous."""
    lo, hi = max(0, hunk.start - 1), min(len(base), hunk.end + 1)
    if lo == hi:  # empty base: only a still-empty document can take the hunk
        return None if current else 0
    deltas = {moved.offset(i) for i in range(lo, hi)}
    if None not in deltas and len(deltas) == 1:
        return deltas.pop()
    window = base[
        lo:hi
    ]  # the map lost these lines (an undone edit, a duplicate line): look where they belong
    for delta in moved.nearby_offsets(lo, hi):
        if 0 <= lo + delta and current[lo + delta : hi + delta] == window:
            return delta
    return None


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
    return rebase_with(path, base, current, hunks, LineMap(matching_blocks(base, current)))


class Rebaser:
    """Rebases one file's hunks onto successive texts of a document, reusing the previous alignment.

    A keystroke changes little: the new text is aligned with the previous one (the common head and tail cover
    almost all of it) and that is composed with the previous alignment, instead of diffing the whole file
    against the base again (tens of milliseconds once edits are spread over a large file).
    """

    def __init__(self, path: str, base_text: str, hunks: list[Hunk]) -> None:
        self.path = path
        self.base = split_lines(base_text)
        self.hunks = hunks
        self._last: tuple[str, list[Block], list[Hunk], list[Refusal]] | None = None

    def rebase(self, current_text: str) -> tuple[list[Hunk], list[Refusal]]:
        """The hunks moved onto current_text and the refused ones."""
        last = self._last
        if last is not None and (last[0] is current_text or last[0] == current_text):
            return last[2], last[3]
        current = split_lines(current_text)
        if last is None:
            blocks = matching_blocks(self.base, current)
        else:
            blocks = compose(last[1], matching_blocks(split_lines(last[0]), current))
        hunks, refused = rebase_with(self.path, self.base, current, self.hunks, LineMap(blocks))
        self._last = (current_text, blocks, hunks, refused)
        return hunks, refused


def hunk_is_applied(path: str, base_text: str, hunk: Hunk, current_text: str) -> bool:
    """True when current_text holds `hunk` applied: its new lines, with one intact line of context each side.

    The check runs against the base with only this hunk applied, so the user's other edits (and the proposal's
    other hunks, applied or not) elsewhere in the file do not matter. A hunk that still applies to current_text
    (its old lines are there) is never reported as applied.
    """
    applied = apply_hunks(base_text, [hunk])
    size = len(hunk.new_lines)
    probe = Hunk(hunk.start, hunk.start + size, hunk.new_lines)
    moved, refused = rebase_hunks(path, applied, current_text, [probe])
    if refused or not moved:
        return False
    still_open, _ = rebase_hunks(path, base_text, current_text, [hunk])
    return not still_open
