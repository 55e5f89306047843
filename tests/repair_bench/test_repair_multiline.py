"""The repair benchmark's bugs beyond one line (multiline.py): each kind on a tiny synthetic project, the tasks
built from them, their fixed dev/held-out split and the report by kind (no model, no network)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_repair_tasks import NO_PLUGINS  # noqa: E402

from benchmarks.repair.build import HELD_OUT_SEED, Task, assign_split, build_project  # noqa: E402
from benchmarks.repair.judge import buggy_text  # noqa: E402
from benchmarks.repair.multiline import MULTI_KINDS, find_multiline_mutations  # noqa: E402
from benchmarks.repair.projects import Project  # noqa: E402
from benchmarks.repair.report import by_kind_lines  # noqa: E402

SHAPES = '''\
"""Tiny helpers with one site of each multi-line kind."""


def label(name, width):
    """name padded with dots to width."""
    return pad(
        name,
        width,
        ".",
    )


def pad(text, width, fill):
    return text.ljust(width, fill)


def mean(values):
    if not values:
        return None
    return sum(values) / len(values)


def first_small(items, limit):
    for item in items:
        if item is not None and item > 0 and item < limit:
            return item
    return None


def head(values, count):
    size = min(count, 3)
    return values[:size]
'''
TEST_SHAPES = """\
from pkg.shapes import first_small, head, label, mean


def test_label():
    assert label("ab", 4) == "ab.."


def test_mean():
    assert mean([]) is None
    assert mean([1, 3]) == 2


def test_first_small():
    assert first_small([None, -1, 9, 2], 5) == 2


def test_head():
    assert head([1, 2, 3, 4], 2) == [1, 2]
    assert head([1, 2, 3, 4], 9) == [1, 2, 3]
"""
PROJECT = Project("tinyshapes", "0.1", packages=("pkg",), tests=("tests",), addopts=NO_PLUGINS)


def found() -> dict[str, list]:
    """The multi-line mutations of SHAPES by kind."""
    by_kind: dict[str, list] = {}
    for mutation in find_multiline_mutations(SHAPES, "pkg/shapes.py"):
        by_kind.setdefault(mutation.kind, []).append(mutation)
    return by_kind


def test_each_kind_edits_what_it_says_and_the_module_still_parses() -> None:
    by_kind = found()
    assert set(by_kind) == set(MULTI_KINDS)
    continuation = {(m.line, m.mutated.strip()) for m in by_kind["continuation_line"]}
    assert (8, "width + 1,") not in continuation and (8, "name,") in continuation  # the call's 3rd line
    assert {m.line for m in by_kind["continuation_line"]} <= {7, 8}  # never the statement's first line
    missing = {(m.line, m.original) for m in by_kind["missing_statement"]}
    assert (18, "    if not values:\n        return None") in missing  # a guard
    assert (20, "    return sum(values) / len(values)") in missing  # a final return
    (dropped,) = by_kind["dropped_condition_part"]
    assert dropped.original.strip() == "if item is not None and item > 0 and item < limit:"
    assert dropped.mutated.strip() == "if item is not None and item > 0:"
    related = by_kind["related_lines"][0]
    assert related.line == 31 and related.original == "    size = min(count, 3)\n    return values[:size]"
    before, after = related.mutated.split("\n")
    assert before != "    size = min(count, 3)" and after != "    return values[:size]"  # both lines wrong
    for mutations in by_kind.values():
        for mutation in mutations:
            ast.parse(mutation.apply(SHAPES))


def test_a_multi_line_bug_is_injected_through_the_tasks_own_fields(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(SHAPES)
    guard = next(m for m in found()["missing_statement"] if m.line == 18)
    task = Task(
        "t-m01",
        "tinyshapes",
        "0.1",
        guard.path,
        guard.line,
        guard.kind,
        guard.function,
        "tests/x.py",
        "",
        "",
        guard.original,
        guard.mutated,
        1,
    )
    assert buggy_text(task, tmp_path) == SHAPES.replace("    if not values:\n        return None\n", "")


def test_the_split_is_half_dev_half_held_out_and_fixed_by_its_seed() -> None:
    tasks = [
        Task(f"p-m{n:02d}", "p", "1", "f.py", n, "missing_statement", "f", "t.py", "", "", "x", "", 1)
        for n in range(1, 8)
    ]
    assign_split(tasks)
    splits = [t.split for t in tasks]
    assert splits.count("dev") == 3 and splits.count("held_out") == 4  # the odd one out held out
    again = [Task(**{**t.__dict__, "split": ""}) for t in reversed(tasks)]
    assign_split(again, HELD_OUT_SEED)
    assert {t.id: t.split for t in again} == {t.id: t.split for t in tasks}  # the order built does not matter


def test_the_report_counts_repairs_by_kind_and_split() -> None:
    results = [
        {"agent": "lsp-agent", "kind": "missing_statement", "split": "dev", "repaired": True},
        {"agent": "lsp-agent", "kind": "missing_statement", "split": "held_out", "repaired": False},
        {"agent": "lsp-agent", "kind": "related_lines", "split": "held_out", "repaired": True},
    ]
    lines = by_kind_lines(results, ["lsp-agent", "mini-swe-agent"])
    assert lines[2].split() == ["missing_statement", "1/2", "-"]
    assert lines[3].split() == ["related_lines", "1/1", "-"]
    assert lines[4].split() == ["split", "dev", "1/1", "-"] and lines[5].split() == [
        "split",
        "held_out",
        "1/2",
        "-",
    ]


@pytest.mark.slow
def test_the_project_builds_multi_line_tasks_the_tests_catch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the test-name heuristic's path, whether or not this interpreter has pytest-cov (the test extra has it)
    monkeypatch.setattr("benchmarks.repair.build.has_coverage_plugin", lambda python: False)
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "shapes.py").write_text(SHAPES)
    (root / "tests").mkdir()
    (root / "tests" / "test_shapes.py").write_text(TEST_SHAPES)
    tasks, stats = build_project(
        PROJECT, root, Path(sys.executable), seed=3, quota=4, log=lambda _: None, multiline=True
    )
    assert [t.id for t in tasks] == [f"tinyshapes-m{n:02d}" for n in range(1, 5)]
    assert {t.kind for t in tasks} == set(MULTI_KINDS)  # round-robin over the kinds, one task per function
    assert set(stats.candidates) == set(MULTI_KINDS) and stats.coverage == "names"
    assert (root / "pkg" / "shapes.py").read_text() == SHAPES  # restored after each try
