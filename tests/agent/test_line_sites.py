"""Which lines sampled line repairs try, in which order: Ochiai first, ties by nearness to the first failure's
traceback, a statement spanning several lines standing for each of its physical lines, a function's defaults once."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.agent.repair.line_sites import SourceFile, repair_sites, second_requests, site_budget
from lsp_agent.tools.fault_lines import Spectra
from lsp_agent.tools.test_runs import TestReport
from lsp_agent.workspace.overlay import Overlay

SCALE = '''\
def scale(values, factor=2,
          offset=0):
    """Scale values."""
    total = sum(values)
    result = [
        v * factor + offset
        for v in values
    ]
    if total > 0:
        return result
    return []


def helper(x):
    return x + 1
'''
FAILURE = "pkg/scale.py:10: in scale\n    return result\nE   AssertionError"


def test_a_file_maps_continuation_lines_to_their_statement_and_functions_to_their_defaults() -> None:
    code = SourceFile.parse(SCALE)
    assert [code.statement_start(n) for n in (2, 4, 5, 6, 7, 8, 10)] == [1, 4, 5, 5, 5, 5, 10]
    assert code.functions == {(1, 11): [1, 2], (14, 15): []}
    assert (code.function_of(6), code.function_of(15), code.function_of(12)) == ((1, 11), (14, 15), None)


def test_a_file_that_does_not_parse_knows_its_lines_only() -> None:
    code = SourceFile.parse("def broken(:\n    return 1\n")
    assert code.lines == ["def broken(:", "    return 1"]
    assert (code.statement_start(2), code.function_of(2), code.functions) == (2, None, {})


def _sites(root: Path, counts: dict[int, tuple[int, int]], failure: str, budget: int = 8) -> list[int]:
    """The lines repair_sites picks in pkg/scale.py for these per-line (failed, passed) counts."""
    task = "The tests in tests/test_scale.py fail; see pkg/scale.py"
    spectra = Spectra(failed=1, passed=1, lines={"pkg/scale.py": counts})
    report = TestReport(False, "pytest", "1 failed, 1 passed", ["t"], failure, spectra=spectra)
    return [site.line for site in repair_sites(task, Overlay(root), report, budget)]


def test_ties_go_traceback_line_first_then_its_function_then_the_rest(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "scale.py").write_text(SCALE)
    only_failing = (1, 0)
    counts = {n: only_failing for n in (5, 6, 7, 9, 10, 15)} | {4: (1, 1)}
    # 10 (in the traceback), its `if` (9), scale's defaults (1, 2); then 5 and its statement's continuation lines
    # 6 and 7 (not 8, a closing bracket); then helper's 15; then the lower-scored 4
    assert _sites(tmp_path, counts, FAILURE, budget=9) == [10, 9, 1, 2, 5, 6, 7, 15, 4]
    assert _sites(tmp_path, counts, FAILURE, budget=3) == [10, 9, 1]  # within the budget
    # no traceback into the file: ties in line order
    no_traceback = _sites(tmp_path, {n: only_failing for n in (5, 10, 15)}, "E   AssertionError")
    assert no_traceback == [5, 6, 7, 1, 2, 10, 9, 15]


CALL = """\
def report(rows, width):
    lines = []
    for row in rows:
        text = format_row(
            row,
            width,
            row,
        )
        lines.append(text)
    return lines


def format_row(row, width, fill):
    return str(row).ljust(width, fill)
"""


def test_a_multi_line_call_stands_for_each_of_its_lines(tmp_path: Path) -> None:
    # the wrong argument is on the call's 3rd line (7); spectra know the statement's first line (4) only
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "scale.py").write_text(CALL)
    counts = {n: (1, 0) for n in (2, 3, 4, 9, 10, 14)}
    code = SourceFile.parse(CALL)
    assert code.statement_lines(4, []) == [4, 5, 6, 7] and code.statement_lines(7, [7]) == [7, 4, 5, 6]
    assert code.statement_lines(9, [9]) == [9]
    assert code.statement_lines(6, []) == [
        6,
        4,
        5,
        7,
    ]  # a continuation line ranked by its own counts: itself first
    no_traceback = _sites(tmp_path, counts, "E   TypeError")
    assert no_traceback[:6] == [2, 3, 4, 5, 6, 7]  # every physical line of the call, in order
    # the traceback points inside the statement: that line first, then the first line, then the rest
    pointed = "pkg/scale.py:7: in report\n    row,\nE   TypeError"
    assert _sites(tmp_path, counts, pointed)[:4] == [7, 4, 5, 6]
    assert _sites(tmp_path, counts, pointed, budget=2) == [7, 4]


def test_requests_left_go_to_the_best_lines_again_while_the_loop_keeps_two_steps() -> None:
    assert (
        site_budget(13, 15) == 10 and second_requests(13, 15, 10) == 3
    )  # the benchmark's 15 steps: 10 + 3 + 2
    assert second_requests(13, 15, 4) == 4  # few lines: each asked about twice at most
    assert second_requests(13, 12, 8) == 2  # the loop keeps its two steps
    assert site_budget(13, 30) == 13 and second_requests(13, 30, 13) == 0  # no request left
    assert second_requests(1, 6, 1) == 0 and second_requests(13, 3, 2) == 0
