"""Incremental tree-sitter parsing of a file's next version: the changed byte range found, the old tree edited."""

from __future__ import annotations

import tree_sitter as ts

ParsedFile = tuple[bytes, ts.Tree]  # a version's source bytes and its tree, kept for the next parse


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix, by binary search over slice comparisons (memcmp speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(data: bytes, offset: int) -> tuple[int, int]:
    """(row, column in bytes) of a byte offset."""
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def parse_version(parser: ts.Parser, data: bytes, previous: ParsedFile | None) -> ts.Tree:
    """Parse, reusing the previous tree of the same file when given (editor buffers change a little at a time)."""
    if previous is None:
        return parser.parse(data)
    old, tree = previous
    start = _common_prefix(old, data)
    suffix = _common_prefix(old[start:][::-1], data[start:][::-1])
    old_end, new_end = len(old) - suffix, len(data) - suffix
    tree = tree.copy()
    tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, start),
        old_end_point=_point(old, old_end),
        new_end_point=_point(data, new_end),
    )
    return parser.parse(data, tree)
