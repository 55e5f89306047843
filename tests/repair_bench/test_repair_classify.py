"""`classify` on a tiny synthetic task set: a repaired task's patch is the original line, equivalent to it on
generated inputs, or plausible only (no model, no network: the tiny project of test_repair_tasks.py)."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_repair_tasks import CALC, PROJECT, make_project  # noqa: E402

from benchmarks.repair.agents import AgentOutcome  # noqa: E402
from benchmarks.repair.build import _try, write_task_set  # noqa: E402
from benchmarks.repair.classify import classify_patch, classify_results, module_name, print_classes  # noqa: E402
from benchmarks.repair.judge import apply_patch, judge, patch_of, snapshot  # noqa: E402
from benchmarks.repair.mutations import find_mutations  # noqa: E402
from benchmarks.repair.projects import Project, copy_tree  # noqa: E402
from benchmarks.repair.run import make_buggy  # noqa: E402
from benchmarks.repair.suite import covered_by_name  # noqa: E402

pytestmark = pytest.mark.slow  # each classification runs the suite and the function in subprocesses (2-5 s)
RUN = AgentOutcome("lsp-agent", 1.0, False, 0, steps=3, stop_reason="complete")


def test_a_patch_is_recorded_and_applied_line_for_line(tmp_path: Path) -> None:
    base = "a\nb\nc\n"
    changed = tmp_path / "x.py"
    changed.write_text("a\nB\nc\nd\n")
    changes = patch_of(base, changed)
    assert changes == [[1, 2, ["B\n"]], [3, 3, ["d\n"]]]
    assert apply_patch(base, json.loads(json.dumps(changes))) == "a\nB\nc\nd\n"  # through JSON too


def test_module_names_of_flat_and_src_layouts() -> None:
    assert module_name(PROJECT, "pkg/calc.py") == "pkg.calc"
    assert (
        module_name(Project("p", "1", ("src/p",), ("tests",), source_root="src"), "src/p/__init__.py") == "p"
    )


def _task(pristine: Path, work: Path, original: str, mutated: str):
    """The task of one mutation of CALC (built as `build` builds it)."""
    covered = covered_by_name(pristine, ["pkg/calc.py"], ["tests/test_calc.py"])
    mutation = next(
        m
        for m in find_mutations(CALC, "pkg/calc.py")
        if (m.original.strip(), m.mutated.strip()) == (original, mutated)
    )
    task, reason = _try(
        PROJECT, copy_tree(pristine, work), Path(sys.executable), mutation, covered, 60, index=1
    )
    assert task is not None, reason
    return task


def _repair(task, pristine: Path, work: Path, fixed_line: str) -> dict:
    """A results record of an agent that replaced the bug's line by `fixed_line`, judged as `run` judges."""
    copy = copy_tree(pristine, work)
    make_buggy(copy, task)
    before = snapshot(copy)
    text = (copy / task.file).read_text()
    (copy / task.file).write_text(text.replace(task.mutated + "\n", fixed_line + "\n", 1))
    verdict = judge(task, PROJECT, copy, before, pristine, Path(sys.executable), RUN)
    assert verdict.repaired
    return {"task": task.id, "project": task.project, "kind": task.kind, **asdict(RUN), **asdict(verdict)}


def test_classify_tells_the_original_line_an_equivalent_patch_and_a_plausible_one(tmp_path: Path) -> None:
    pristine = make_project(tmp_path / "pristine")
    total = _task(pristine, tmp_path / "w1", "result += number", "result -= number")
    describe = _task(pristine, tmp_path / "w2", "if n is None or n > 100:", "if n is None:")
    describe.id, total.id = "tinycalc-02", "tinycalc-01"
    records = [
        _repair(total, pristine, tmp_path / "r1", "        result += number"),  # the project's own line
        _repair(total, pristine, tmp_path / "r2", "        result = number + result"),  # the same sums
        # describe(500), describe(None) and describe(3) pass; describe(4), a varied input, does not behave the same
        _repair(describe, pristine, tmp_path / "r3", "    if n is None or n > 3:"),
        {
            "task": "tinycalc-01",
            "agent": "mini-swe-agent",
            "repaired": True,
            "exact_fix": False,
        },  # no patch kept
        {"task": "tinycalc-02", "agent": "lsp-agent", "repaired": False},  # not repaired: not classified
    ]
    task_file = tmp_path / "tasks.json"
    write_task_set(task_file, 1, [total, describe], [])
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"task_file": str(task_file), "results": records}))
    classified = classify_results(
        results, python=Path(sys.executable), locate=lambda task: (PROJECT, pristine)
    )
    rows = classified["classes"]
    assert [(r["task"], r["agent"], r["class"]) for r in rows] == [
        ("tinycalc-01", "lsp-agent", "original"),
        ("tinycalc-01", "lsp-agent", "equivalent"),
        ("tinycalc-02", "lsp-agent", "plausible"),
        ("tinycalc-01", "mini-swe-agent", "unknown"),
    ]
    assert rows[1]["inputs"] >= 4 and rows[1]["evidence"].startswith("same outcome on")
    assert rows[2]["evidence"] == "describe(4): the original returned 'small'; the patch returned 'big'"
    shown = io.StringIO()
    print_classes(classified, shown)
    assert "lsp-agent: 3 repaired: original 1, equivalent 1, plausible 1" in shown.getvalue()


def test_a_changed_default_shows_by_calls_that_leave_the_parameter_out(tmp_path: Path) -> None:
    # the suite calls clamp(-5), clamp(50), ...: recorded with high=10 given, the default is never used unless
    # the call is also made with the parameters that had their default left out
    pristine = make_project(tmp_path / "pristine")
    task = _task(
        pristine, tmp_path / "w", "def clamp(value, low=0, high=10):", "def clamp(value, low=0, high=11):"
    )
    verdict = classify_patch(task, PROJECT, pristine, Path(sys.executable), {task.file: []})  # the bug itself
    assert verdict["class"] == "plausible"
    assert verdict["evidence"] == "clamp(50): the original returned 10; the patch returned 11"
