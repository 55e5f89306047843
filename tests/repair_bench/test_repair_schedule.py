"""The schedule rank of `sites` (no model, no test run): which request can produce a task's fix, its position in
the agent's own request schedule, and recall by kind and split."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.repair.build import Task  # noqa: E402
from benchmarks.repair.schedule import fixing_requests, schedule_rank, schedule_table  # noqa: E402

BUGGY = [  # `return result` removed after line 4; a comment and a blank line between
    "def total(values):",
    "    result = 0",
    "    for v in values:",
    "        result += v",
    "    # done",
    "",
    "def count(values):",
]


def task(kind: str, line: int, split: str = "dev") -> Task:
    """A task of `kind` at `line` of pkg/items.py."""
    return Task("p-m01", "p", "1", "pkg/items.py", line, kind, "f", "t.py", "", "", "x", "", 1, split)


def test_a_missing_statement_is_fixed_by_an_insertion_at_its_gap_or_after_the_blank_lines_before_it() -> None:
    wanted = fixing_requests(task("missing_statement", 7), BUGGY)
    assert wanted == {("pkg/items.py", n, "insert") for n in (4, 5, 6)}
    schedule = [("pkg/items.py", 4, "infill"), ("pkg/items.py", 2, "insert"), ("pkg/items.py", 5, "insert")]
    assert schedule_rank(task("missing_statement", 7), BUGGY, schedule) == 3
    assert schedule_rank(task("missing_statement", 7), BUGGY, schedule[:2]) is None  # not in the budget


def test_a_line_bug_needs_a_request_at_its_line_and_a_dropped_part_an_extension() -> None:
    schedule = [("pkg/items.py", 3, "extend"), ("other.py", 4, "infill"), ("pkg/items.py", 4, "line")]
    assert schedule_rank(task("continuation_line", 4), BUGGY, schedule) == 3
    assert schedule_rank(task("swapped_operator", 4), BUGGY, schedule) == 3  # the one-line set's kinds too
    assert schedule_rank(task("dropped_condition_part", 3), BUGGY, schedule) == 1
    assert schedule_rank(task("dropped_condition_part", 4), BUGGY, schedule) is None  # a line request cannot


def test_two_related_lines_need_more_than_one_request() -> None:
    schedule = [("pkg/items.py", 4, "infill")]
    assert fixing_requests(task("related_lines", 4), BUGGY) is None
    assert schedule_rank(task("related_lines", 4), BUGGY, schedule) is None


def test_the_table_gives_recall_per_kind_and_split_and_counts_related_lines_apart() -> None:
    results = [
        {"kind": "missing_statement", "split": "dev", "schedule": 2},
        {"kind": "missing_statement", "split": "dev", "schedule": None},
        {"kind": "continuation_line", "split": "held_out", "schedule": 7},
        {"kind": "related_lines", "split": "dev", "schedule": None},
    ]
    rows = {row[:24].strip(): row[24:].split() for row in schedule_table(results).splitlines()[1:]}
    assert rows["all"][:5] == ["0/3", "1/3", "1/3", "2/3", "2/3"] and "two lines" in " ".join(rows["all"])
    assert rows["missing_statement"] == ["0/2", "1/2", "1/2", "1/2", "1/2"]
    assert rows["continuation_line"] == ["0/1", "0/1", "0/1", "1/1", "1/1"]
    assert rows["related_lines"][:4] == ["no", "single", "request", "can"]
    assert rows["split dev"][:5] == ["0/2", "1/2", "1/2", "1/2", "1/2"]
    assert rows["split held_out"] == ["0/1", "0/1", "0/1", "1/1", "1/1"]
