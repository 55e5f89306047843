"""The model-free `sites` benchmark: the bug's line ranked among line repairs' sites and by plain Ochiai, through the
real child process, sandbox and coverage on the tiny project."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_repair_tasks import CALC, PROJECT, make_project

from benchmarks.repair.build import Task, _try
from benchmarks.repair.mutations import find_mutations
from benchmarks.repair.sites import rank_task, recall_table
from benchmarks.repair.suite import covered_by_name


def total_task(tmp_path: Path) -> tuple[Path, Path, Task]:
    """The tiny project, this interpreter, and the task built (with a real test run) from the bug that turns
    total()'s `result += number` into `result -= number`."""
    pristine = make_project(tmp_path / "pristine")
    python = Path(sys.executable)
    covered = covered_by_name(pristine, ["pkg/calc.py"], ["tests/test_calc.py"])
    mutation = next(m for m in find_mutations(CALC, "pkg/calc.py") if m.mutated.strip() == "result -= number")
    task, _ = _try(PROJECT, pristine, python, mutation, covered, 60, index=1)
    return pristine, python, task


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_bug_line_is_ranked_among_the_sites_and_by_ochiai(tmp_path: Path) -> None:
    pristine, python, task = total_task(tmp_path)
    ranks = rank_task(task, PROJECT, pristine, python, budget=6)
    failure = ranks.pop("failure")  # the first failure, as a line-repair request shows it (`asks`)
    assert "test_total" in failure and "assert -6 == 6" in failure
    requests = ranks.pop("requests")  # the agent's own schedule at 20 steps, with an infill template
    # total()'s three lines run only by the failing test tie; the loop body is the third, in both orders
    assert ranks == {
        "task": task.id,
        "kind": "swapped_operator",
        "split": "",
        "sites": 3,
        "ochiai": 3,
        "schedule": 3,  # the third request fills in the bug's line
        "problem": "",
        "tracer": "coverage",
    }
    assert requests[2] == ["pkg/calc.py", task.line, "infill"]
    assert {kind for _, _, kind in requests} <= {"infill", "insert", "extend", "line"}
    assert rank_task(task, PROJECT, pristine, python, budget=2)["sites"] is None  # beyond the budget
    assert (pristine / "pkg" / "calc.py").read_text() == CALC  # the bug went into a copy


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_without_coverage_the_agents_own_tracer_ranks_the_bug_the_same(tmp_path: Path) -> None:
    pristine, python, task = total_task(tmp_path)
    ranks = rank_task(task, PROJECT, pristine, python, budget=6, coverage=False)
    assert (ranks["sites"], ranks["ochiai"], ranks["problem"], ranks["tracer"]) == (3, 3, "", "settrace")


def test_the_agents_environment_without_coverage_hides_it_and_pytest_still_runs(tmp_path: Path) -> None:
    import subprocess

    from benchmarks.repair.agents import HIDDEN_COVERAGE, agent_environment

    tree = make_project(tmp_path / "proj")
    env = agent_environment(Path(sys.executable), tree, PROJECT, tmp_path / "scratch", coverage=False)
    hidden = subprocess.run(
        [sys.executable, "-c", "import coverage"], env=env, capture_output=True, text=True
    )
    assert hidden.returncode != 0 and HIDDEN_COVERAGE in hidden.stderr
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q"], cwd=tree, env=env, capture_output=True, text=True
    )
    assert tests.returncode == 0 and "4 passed" in tests.stdout
    assert "-p no:pytest_cov" in env["PYTEST_ADDOPTS"]
    shown = agent_environment(Path(sys.executable), tree, PROJECT, tmp_path / "scratch2")
    assert (
        subprocess.run([sys.executable, "-c", "import coverage"], env=shown, capture_output=True).returncode
        == 0
    )


def test_recall_counts_the_tasks_ranked_within_k_with_the_ratio_to_ochiai() -> None:
    results = [
        {"sites": 1, "ochiai": 2},
        {"sites": 2, "ochiai": None},
        {"sites": None, "ochiai": 4},
        {"sites": 4, "ochiai": 9},
    ]
    rows = recall_table(results, budget=4).splitlines()
    assert rows[0].split()[:3] == ["recall@k", "sites", "ochiai"]
    assert [row.split() for row in rows[1:]] == [
        ["@1", "1/4", "0/4", "-"],
        ["@3", "2/4", "1/4", "2.00"],
        ["@4", "3/4", "2/4", "1.50"],
        ["@5", "3/4", "2/4", "1.50"],
    ]
