"""The order of line repairs' requests (line_schedule.request_schedule): each line filled in, code added in steps
of its own, first where the failure shows a None where a value was wanted."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.agent.repair.line_schedule import request_schedule
from lsp_agent.config import Settings
from lsp_agent.tools.fault_lines import Spectra
from lsp_agent.tools.test_runs import TestReport
from lsp_agent.workspace.overlay import Overlay

ITEMS = '''\
def total(values):
    result = []
    for v in values:
        if v is not None and v > 0:
            result.append(v)


def label(word):
    """The word as a label."""


def shout(word):
    return word.upper()
'''
TASK = "The tests in tests/test_items.py fail since the last change to pkg/items.py; fix it."


def schedule(
    root: Path, failure: str, repair_lines: int = 13, steps: int = 20, infill: bool = True
) -> list[tuple[int, str]]:
    """(line, kind) of each request for a failing test that ran total()'s lines 2-5."""
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "items.py").write_text(ITEMS)
    spectra = Spectra(failed=1, passed=1, lines={"pkg/items.py": {n: (1, 0) for n in (2, 3, 4, 5)}})
    report = TestReport(False, "pytest", "1 failed, 1 passed", ["t"], failure, spectra=spectra)
    additions = Settings().repair_additions  # 4
    made = request_schedule(TASK, Overlay(root), report, repair_lines, steps, infill, additions)
    return [(site.line, kind) for site, kind in made]


def test_each_line_is_filled_in_then_code_is_added_in_steps_the_loop_can_spare(tmp_path: Path) -> None:
    requests = schedule(tmp_path, "E   assert 3 == 6")
    fills = [(n, "infill") for n in (2, 3, 4, 5)]
    # the best line's (2) condition is none; total()'s end, its start, then after the line itself
    assert requests[:4] == fills and requests[4:7] == [(5, "insert"), (1, "insert"), (2, "insert")]
    # then the 4 lines asked about again: the 3 additions took steps of their own, not theirs
    assert requests[7:] == [(n, "line") for n in (2, 3, 4, 5)]


def test_a_none_where_a_value_was_wanted_inserts_at_the_ends_its_function_falls_off_first(
    tmp_path: Path,
) -> None:
    failure = "tests/test_items.py:4: in test_total\n    assert total([1]) == 1\nE   assert None == 1"
    requests = schedule(tmp_path, failure)
    fills = [(n, "infill") for n in (2, 3, 4, 5)]
    assert requests[0] == (5, "insert")  # where control falls off total()'s end
    assert requests[1:5] == fills
    named = "E   AssertionError: assert None == 'A'\nE    +  where None = <function label at 0x7f>('a')"
    assert schedule(tmp_path, named)[:2] == [(9, "insert"), (5, "insert")]  # label() has only its docstring
    assert schedule(tmp_path, "E   AssertionError: None != 1")[0] == (5, "insert")  # unittest's words
    # a None used as an object: as likely a wrong line, so the lines come first, then that insertion
    used = schedule(tmp_path, "E   TypeError: 'NoneType' object is not callable")
    assert used[:5] == [*fills, (5, "insert")] and used[5:7] == [(1, "insert"), (2, "insert")]
    assert schedule(tmp_path, "E   assert 'Nonesuch' == 'x'")[0] == (2, "infill")  # a word, not a None


def test_the_budget_bounds_every_request_and_without_infill_lines_only_are_asked_about(
    tmp_path: Path,
) -> None:
    # 6 steps: 4 lines (two thirds), nothing left for the loop's two steps but what repairLines leaves
    assert schedule(tmp_path, "E   assert None == 1", steps=6) == [(n, "infill") for n in (2, 3, 4, 5)]
    # 8 steps: no step of their own, so the additions take the second requests' (as before)
    assert schedule(tmp_path, "E   assert 3 == 6", steps=8)[4:] == [(5, "insert"), (1, "insert")]
    requests = schedule(tmp_path, "E   assert None == 1", infill=False)
    assert requests == [(n, "line") for n in (2, 3, 4, 5, 2, 3, 4, 5)]
    assert schedule(tmp_path, "E   assert None == 1", repair_lines=0) == []


EVIDENT = '''\
class Timer:
    def __init__(self):
        self.nesting = 0

    def __enter__(self):
        if self.nesting == 0:
            self.time = 1
        return self.time

    def __exit__(self, *exc):
        self.nesting -= 1


def build(n):
    item = Item(n)
    item.size = n


def translated(message: str) -> str:
    """Translate it."""


def show(item):
    return f"item {item.name}"
'''


def evident_schedule(
    root: Path,
    failure: str,
    steps: int = 20,
    text: str = EVIDENT,
    lines: tuple[int, ...] = (6, 7, 8, 11, 15, 16, 24),
) -> list[tuple[int, str]]:
    """(line, kind) of each request for a failing test that ran `lines` of `text` (EVIDENT's functions')."""
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "items.py").write_text(text)
    ran = {n: (1, 0) for n in lines}
    spectra = Spectra(failed=1, passed=0, lines={"pkg/items.py": ran})
    report = TestReport(False, "pytest", "1 failed", ["t"], failure, spectra=spectra)
    made = request_schedule(TASK, Overlay(root), report, 13, steps, True, Settings().repair_additions)
    return [(site.line, kind) for site, kind in made]


def test_insertions_the_code_itself_calls_for_come_before_the_lines_are_filled_in(tmp_path: Path) -> None:
    requests = evident_schedule(tmp_path, "E   assert 3 == 6")
    # translated() promises a str and has only its docstring; build() drops the item it built; nesting only
    # goes down, so __enter__ misses its increase (before its return)
    assert requests[:3] == [(20, "insert"), (16, "insert"), (7, "insert")]
    assert requests[3][1] == "infill"
    # a None formatted into text: a guard at the start of show(), the function formatting it
    shown = evident_schedule(tmp_path, "E   AssertionError: assert 'item None' == 'item a'")
    assert shown[:4] == [(20, "insert"), (16, "insert"), (7, "insert"), (23, "insert")]
    # they are additions: without steps of their own they take the second requests' and come first still
    assert evident_schedule(tmp_path, "E   assert 3 == 6", steps=11)[:2] == [(20, "insert"), (16, "insert")]


def test_a_line_that_may_read_the_wrong_one_of_two_values_unpacked_together_is_filled_in_first_and_once(
    tmp_path: Path,
) -> None:
    text = "def split(total):\n    hours, rest = divmod(total, 60)\n    return [hours, hours]\n"
    requests = evident_schedule(tmp_path, "E   assert [1, 1] == [1, 0]", text=text, lines=(2, 3))
    # rest is never read while hours is: line 3 reads it, so it is filled in first, and not again after line 2
    assert requests[:2] == [(3, "infill"), (2, "infill")]
    assert [kind for _, kind in requests].count("infill") == 2


def test_a_function_returning_a_value_on_some_paths_only_gets_its_return_first_when_the_failure_shows_a_none(
    tmp_path: Path,
) -> None:
    text = "def bound(self, obj):\n    if obj is None:\n        return self\n    self.calls += 1\n"
    used = evident_schedule(
        tmp_path, "E   TypeError: 'NoneType' object is not callable", text=text, lines=(2, 4)
    )
    assert used[0] == (4, "insert")  # where it falls off its end
    plain = evident_schedule(tmp_path, "E   assert 3 == 6", text=text, lines=(2, 4))
    assert plain[0][1] == "infill"  # common in working code: no evidence without a None
