"""The fast line splitting and alignment behind every code action give exactly what the plain versions give."""

from __future__ import annotations

import random
import re

from lsp_agent.workspace.hunks import common_head, common_tail, compute_hunks, matching_blocks, split_lines
from lsp_agent.workspace.rebase import Block, Rebaser, compose, rebase_hunks

# the definition: LSP breaks lines at \n, \r\n and \r only
LSP_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+", re.S)
# characters str.splitlines also breaks at, mixed with LSP's own breaks and plain text
PIECES = list("a \n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029é") + ["bc", "\r\n"]


def plain_head(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def plain_tail(a: tuple[str, ...], b: tuple[str, ...], limit: int) -> int:
    n = 0
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def plain_compose(ab: list[Block], bc: list[Block]) -> list[Block]:
    """Both block lists walked side by side (the composition before bisection)."""
    out: list[Block] = []
    i = k = 0
    while i < len(ab) and k < len(bc):
        a, b1, n1 = ab[i]
        b2, c, n2 = bc[k]
        lo, hi = max(b1, b2), min(b1 + n1, b2 + n2)
        if lo < hi:
            out.append((a + lo - b1, c + lo - b2, hi - lo))
        if b1 + n1 <= b2 + n2:
            i += 1
        else:
            k += 1
    return out


def test_split_lines_matches_the_lsp_definition_with_every_other_line_break():
    rng = random.Random(12)
    texts = ["", "\n", "\r", "\r\n", "a", "a\x0c", "a\x0c\n", "\x85", "a\r\r\n\n", "x\u2028"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 30))) for _ in range(3000)]
    for text in texts:
        assert split_lines(text) == tuple(LSP_LINE.findall(text)), repr(text)


def test_common_head_and_tail_match_a_line_by_line_scan():
    rng = random.Random(7)
    for _ in range(2000):
        a = tuple(rng.choice("xyz\n") for _ in range(rng.randrange(0, 40)))
        b = list(a)
        for _ in range(rng.randrange(0, 4)):  # a few edits anywhere, or none
            at = rng.randrange(0, len(b) + 1)
            b[at : at + rng.randrange(0, 3)] = [rng.choice("xyzw")] * rng.randrange(0, 3)
        b = tuple(b)
        head = common_head(a, b)
        assert head == plain_head(a, b)
        limit = min(len(a), len(b)) - head
        assert common_tail(a, b, limit) == plain_tail(a, b, limit)


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    out = list(lines)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(0, len(out) + 1)
        out[at : at + rng.randrange(0, 3)] = [f"new {rng.random()}\n" for _ in range(rng.randrange(0, 3))]
    return out


def test_compose_matches_walking_both_block_lists():
    rng = random.Random(3)
    for _ in range(500):
        a = [f"line {i % 7}\n" for i in range(rng.randrange(0, 60))]
        b = _edit(a, rng)
        c = _edit(b, rng)
        ab = matching_blocks(tuple(a), tuple(b))
        bc = matching_blocks(tuple(b), tuple(c))
        assert compose(ab, bc) == plain_compose(ab, bc)


def test_rebaser_after_many_keystrokes_agrees_with_a_fresh_rebase():
    rng = random.Random(5)
    base = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(100))
    new = base.replace("return x + 10\n", "return x - 10\n").replace("return x + 80\n", "return x - 80\n")
    hunks = compute_hunks(base, new)
    rebaser = Rebaser("big.py", base, hunks)
    lines = list(split_lines(base))
    seen_refused = seen_moved = False
    for _ in range(100):
        at = rng.randrange(0, len(lines)) if rng.random() < 0.95 else 241  # now and then near the second hunk
        if rng.random() < 0.8:
            lines[at] = "#" + lines[at]  # a keystroke, sometimes on a hunk's own lines (refused then)
        else:
            lines.insert(at, "\n")
        text = "".join(lines)
        moved, refused = rebaser.rebase(text)
        assert (moved, refused) == rebase_hunks("big.py", base, text, hunks)
        seen_refused = seen_refused or bool(refused)
        seen_moved = seen_moved or any(h.start != o.start for h, o in zip(moved, hunks, strict=False))
    assert seen_refused and seen_moved  # both paths were exercised
