"""Which hunks a text holds: the check behind "applied" (never a client's word)."""

from __future__ import annotations

from lsp_agent.workspace.hunks import apply_hunks, compute_hunks
from lsp_agent.workspace.rebase import hunk_is_applied

BASE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(8))
NEW = (
    BASE.replace("    return x + 1\n", "    return x + 1  # one\n")  # a change
    .replace("def f4(x):\n    return x + 4\n\n", "")  # a deletion
    .replace("def f6(x):\n", "def f6(x):\n    '''six'''\n")  # an insertion
)


def test_each_hunk_is_found_alone_together_and_among_other_edits():
    hunks = compute_hunks(BASE, NEW)
    assert len(hunks) == 3
    for hunk in hunks:
        assert not hunk_is_applied("m.py", BASE, hunk, BASE), "the untouched text holds nothing"
        assert hunk_is_applied("m.py", BASE, hunk, apply_hunks(BASE, [hunk]))
        assert hunk_is_applied("m.py", BASE, hunk, NEW), "applied together with the others"
        moved = "import os\n" + apply_hunks(BASE, [hunk]).replace("return x + 7\n", "return x + 77\n")
        assert hunk_is_applied("m.py", BASE, hunk, moved), "found where it moved, other edits elsewhere"
        others = [h for h in hunks if h is not hunk]
        assert not hunk_is_applied("m.py", BASE, hunk, apply_hunks(BASE, others))


def test_near_misses_are_not_applied():
    (change, deletion, insertion) = compute_hunks(BASE, NEW)
    typed_differently = BASE.replace("    return x + 1\n", "    return x + 1  # uno\n")
    assert not hunk_is_applied("m.py", BASE, change, typed_differently)
    half_deleted = BASE.replace("def f4(x):\n", "")
    assert not hunk_is_applied("m.py", BASE, deletion, half_deleted)
    elsewhere = BASE.replace("def f2(x):\n", "def f2(x):\n    '''six'''\n")
    assert not hunk_is_applied("m.py", BASE, insertion, elsewhere), "the right lines in the wrong place"
