"""Up-front context: which chunks go into the first message and how they are shown (real index, no model)."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.agent.repair.upfront import Budget, _without_docstrings, code_chunks, frame_lines, numbered
from lsp_agent.index import WorkspaceIndex
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

SLICES = '''"""Slicing helpers."""


def normalize(start, stop):
    """Clamp negative bounds.

    Longer explanation of the bounds,
    over several lines.
    """
    if start < 0:
        start = 0
    return start, stop


def window(items, start, stop):
    """The items between start and stop."""
    start, stop = normalize(start, stop)
    return items[start:stop]
'''

TRACEBACK = """tests/test_slices.py:4: in test_window
    assert window([1, 2, 3], -1, 2) == [1, 2]
pkg/slices.py:17: in window
    start, stop = normalize(start, stop)
pkg/slices.py:10: in normalize
    if start < 0:
E   TypeError: bad bounds
"""


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "slices.py").write_text(SLICES)
    (tmp_path / "pkg" / "other.py").write_text("def window_size(items):\n    return len(items)\n")
    (tmp_path / "tests" / "test_slices.py").write_text(
        "from pkg.slices import window\n\n\ndef test_window():\n    assert window([1, 2, 3], -1, 2) == [1, 2]\n"
    )
    return tmp_path


def test_the_deepest_traceback_frame_comes_first_and_tests_are_left_out(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with WorkspaceIndex(root) as index:
        index.refresh()
        ctx = ToolContext(root=root, overlay=Overlay(root), index=index)
        frames = frame_lines(TRACEBACK, ["pkg/slices.py"])
        assert frames == {"pkg/slices.py": [17, 10]}
        hits = code_chunks(ctx, "window test_window " + TRACEBACK, ["pkg/slices.py"], Budget(2000, 2), frames)
        assert [(h.path, h.symbol) for h in hits] == [
            ("pkg/slices.py", "normalize"),
            ("pkg/slices.py", "window"),
        ]
        shown = numbered(hits[0], ctx, frames["pkg/slices.py"])
    assert shown.splitlines()[:4] == [
        "pkg/slices.py lines 4-12 (normalize):",
        "4: def normalize(start, stop):",
        '5:     """Clamp negative bounds.',
        "6-9: [docstring, 4 more lines]",
    ]
    assert "10:     if start < 0:" in shown


def test_without_an_index_there_is_no_retrieval(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    ctx = ToolContext(root=root, overlay=Overlay(root))
    assert code_chunks(ctx, "window", [], Budget(2000, 2)) == []


def test_one_line_and_two_line_docstrings_stay() -> None:
    lines = [(1, "def f():"), (2, '    """One line."""'), (3, "    return 1")]
    assert _without_docstrings(lines) == ["1: def f():", '2:     """One line."""', "3:     return 1"]
    two = [(1, "def g():"), (2, '    """Two'), (3, '    lines."""'), (4, "    return 2")]
    assert _without_docstrings(two) == ["1: def g():", '2:     """Two', '3:     lines."""', "4:     return 2"]


def test_the_chunk_of_the_most_suspicious_line_is_shown_even_when_retrieval_misses_it(tmp_path: Path) -> None:
    from lsp_agent.tools.fault_lines import SuspectLine

    root = _workspace(tmp_path)
    (root / "pkg" / "units.py").write_text(
        "def to_metres(feet):\n    factor = 0.3048\n    return feet / factor\n\n\ndef other():\n    return 1\n"
    )
    with WorkspaceIndex(root) as index:
        index.refresh()
        ctx = ToolContext(root=root, overlay=Overlay(root), index=index)
        plain = code_chunks(ctx, "window normalize", [], Budget(2000, 2))
        assert all(h.path == "pkg/slices.py" for h in plain)  # the query finds only the slicing helpers
        suspect = SuspectLine("pkg/units.py", 3, 1.0, 1, 0)
        hits = code_chunks(ctx, "window normalize", [], Budget(2000, 2), suspect=suspect)
        assert [(h.path, h.start, h.end, h.symbol) for h in hits][0] == ("pkg/units.py", 1, 3, "to_metres")
        assert hits[1:] == plain[:1]
        shown = numbered(hits[0], ctx, [3])
        # a suspect inside a chunk retrieval already chose changes nothing
        inside = SuspectLine("pkg/slices.py", plain[0].start, 1.0, 1, 0)
        assert code_chunks(ctx, "window normalize", [], Budget(2000, 2), suspect=inside) == plain
    assert shown.splitlines() == [
        "pkg/units.py lines 1-3 (to_metres):",
        "1: def to_metres(feet):",
        "2:     factor = 0.3048",
        "3:     return feet / factor",
    ]
