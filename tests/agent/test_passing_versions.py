"""Choosing among versions of a line that pass: token distance, simpler versions, the note; and which tasks may
change their tests."""

from __future__ import annotations

import pytest

from lsp_agent.agent.repair.line_alternatives import (
    alternatives_note,
    ranked,
    simpler_versions,
    token_distance,
)
from lsp_agent.tools.tested_edit_scope import asks_for_test_changes, named_test_file

LINE = "        if len(word) < len(best):"
PLAUSIBLE = "        if word.islower() and len(word) > len(best):"


def test_token_distance_counts_the_tokens_a_version_changes() -> None:
    assert token_distance(LINE, "        if len(word) > len(best):") == 1
    assert token_distance(LINE, PLAUSIBLE) == 7  # `word . islower ( ) and` added, `<` replaced
    assert token_distance("    return a-b", "    return a - b") == 0  # spacing is not a change
    assert token_distance('    s = "unterminated', '    s = "unterminated!') > 0  # by characters


def test_simpler_versions_make_each_part_of_the_change_alone() -> None:
    assert simpler_versions(LINE, PLAUSIBLE) == [
        "        if word.islower() and len(word) < len(best):",
        "        if len(word) > len(best):",
    ]
    assert simpler_versions("    return a + b * 2", "    return a - b * 3") == [
        "    return a - b * 2",
        "    return a + b * 3",
    ]
    assert simpler_versions(LINE, "        if len(word) > len(best):") == []  # one part: nothing simpler
    many = "        if a(word) > b(best) or c or d or e:"
    assert len(simpler_versions(LINE, many)) <= 6


def test_ranked_puts_the_smallest_change_first_and_keeps_ties_in_order() -> None:
    smaller = "        if len(word) > len(best):"
    assert ranked(LINE, [PLAUSIBLE, smaller]) == [smaller, PLAUSIBLE]
    assert ranked("    return lo", ["    return hi", "    return x"]) == ["    return hi", "    return x"]


def test_the_note_names_the_chosen_version_and_the_others() -> None:
    assert alternatives_note(LINE, ["        if len(word) > len(best):"]) == ""
    note = alternatives_note(LINE, ["        if len(word) > len(best):", PLAUSIBLE])
    assert note.startswith("2 different versions of the line pass the tests")
    assert "chosen `if len(word) > len(best):` (1 token changed, the smallest change)" in note
    assert f"also passing: `{PLAUSIBLE.strip()}` (7 tokens changed)" in note


@pytest.mark.parametrize(
    "task",
    [
        "Update the test in tests/test_calc.py: add(2, 3) is 5 now.",
        "Add a test for clamp() to tests/test_stats.py.",
        "The test in tests/test_x.py is wrong: fix it.",
        "Change the expected value in tests/test_x.py to 6.",
        "Write tests.",
    ],
)
def test_tasks_that_ask_for_test_changes(task: str) -> None:
    assert asks_for_test_changes(task)


@pytest.mark.parametrize(
    "task",
    [
        "The tests in tests/test_x.py fail since the last change to src/pkg/y.py; fix it. Run them with "
        "`python -m pytest tests/test_x.py`.",
        "Fix the failing tests in tests/test_calc.py.",
        "Make tests/test_calc.py pass.",
        "Update the docs; tests/test_x.py fails.",
    ],
)
def test_tasks_that_do_not(task: str) -> None:
    assert not asks_for_test_changes(task)


def test_a_named_test_file_by_path_or_node_id() -> None:
    assert named_test_file("tests/test_x.py", ["tests/test_x.py::test_a"])
    assert named_test_file("tests/test_x.py", ["./tests/test_x.py"])
    assert not named_test_file("tests/test_y.py", ["tests/test_x.py"])
