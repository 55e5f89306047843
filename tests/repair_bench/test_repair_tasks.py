"""The deterministic parts of the repair benchmark: mutations, task building, judging (no model, no network)."""

from __future__ import annotations

import ast
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.repair.agents import AgentOutcome, read_lsp_transcript  # noqa: E402
from benchmarks.repair.build import _try, build_project, read_task_set, write_task_set  # noqa: E402
from benchmarks.repair.judge import classify, judge, snapshot  # noqa: E402
from benchmarks.repair.mutations import KINDS, find_mutations  # noqa: E402
from benchmarks.repair.projects import Project, copy_tree  # noqa: E402
from benchmarks.repair.run import make_buggy  # noqa: E402
from benchmarks.repair.suite import covered_by_name  # noqa: E402

CALC = '''\
"""A tiny module with one bug site of each kind."""


def clamp(value, low=0, high=10):
    """value limited to [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def window(items, size=2, strict=False):
    """The first `size` items; with strict, fewer is an error."""
    head = items[:size]
    if strict and not len(head) == size:
        raise ValueError("too few items")
    return head


def total(numbers):
    """The sum, written as a loop."""
    result = 0
    for number in numbers:
        result += number
    return result


def describe(n):
    """A word for the size of n."""
    if n is None or n > 100:
        return "big"
    return "small"
'''
TEST_CALC = """\
import pytest
from pkg.calc import clamp, describe, total, window


def test_clamp():
    assert clamp(-5) == 0
    assert clamp(50) == 10
    assert clamp(5) == 5
    assert clamp(10) == 10


def test_window():
    assert window([1, 2, 3]) == [1, 2]
    assert window([1, 2, 3], 3, strict=True) == [1, 2, 3]
    with pytest.raises(ValueError):
        window([1], strict=True)


def test_total():
    assert total([1, 2, 3]) == 6


def test_describe():
    assert describe(500) == "big"
    assert describe(None) == "big"
    assert describe(3) == "small"
"""
# This venv stands in for the project's test venv: its pytest plugins (hypothesis, pytest-lsp, asyncio, ...) cost
# ~1.5 s CPU per pytest run and the tiny project uses none, so its runs (the agents' included) leave them out, as a
# project's own venv would not have them. The harness passes PYTEST_ADDOPTS on but drops other PYTEST_ variables.
NO_PLUGINS = " ".join(
    f"-p no:{entry.name}" for entry in entry_points(group="pytest11") if "cov" not in entry.name
)
PROJECT = Project("tinycalc", "0.1", packages=("pkg",), tests=("tests",), addopts=NO_PLUGINS)


def make_project(root: Path) -> Path:
    """A tiny pure-Python project with a passing suite."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    return root


def test_every_mutation_changes_exactly_one_line_and_still_parses():
    mutations = find_mutations(CALC, "pkg/calc.py")
    assert {m.kind for m in mutations} == set(KINDS)
    original = CALC.splitlines()
    for m in mutations:
        mutated = m.apply(CALC)
        ast.parse(mutated)
        changed = [i for i, (a, b) in enumerate(zip(original, mutated.splitlines(), strict=True)) if a != b]
        assert changed == [m.line - 1], m
        assert original[m.line - 1] == m.original and mutated.splitlines()[m.line - 1] == m.mutated


def test_mutation_kinds_edit_what_they_say():
    by_kind = {}
    for m in find_mutations(CALC, "pkg/calc.py"):
        by_kind.setdefault(m.kind, set()).add((m.original.strip(), m.mutated.strip()))
    assert ("if value < low:", "if value <= low:") in by_kind["swapped_comparison"]
    assert ("result += number", "result -= number") in by_kind["swapped_operator"]
    assert ("if strict and not len(head) == size:", "if strict and len(head) == size:") in by_kind[
        "dropped_negation"
    ]
    assert ("def clamp(value, low=0, high=10):", "def clamp(value, low=0, high=11):") in by_kind[
        "wrong_default"
    ]
    assert ("if n is None or n > 100:", "if n is None:") in by_kind["dropped_condition"]
    assert ("result = 0", "result = 1") not in by_kind["off_by_one"]  # a plain assignment is no bound
    assert ("head = items[:size]", "head = items[:2]") not in by_kind["off_by_one"]
    assert ("return value", "return low") in by_kind["wrong_variable"]


def test_mutations_respect_covered_lines():
    lines = {25}  # `result += number`
    kinds = {(m.line, m.kind) for m in find_mutations(CALC, "pkg/calc.py", lines)}
    assert kinds and all(line == 25 for line, _ in kinds)


def test_name_heuristic_maps_function_lines_to_the_tests_that_mention_them(tmp_path):
    tree = make_project(tmp_path / "proj")
    covered = covered_by_name(tree, ["pkg/calc.py"], ["tests/test_calc.py"])
    assert covered["pkg/calc.py"][25] == {"tests/test_calc.py"}
    assert 1 not in covered["pkg/calc.py"]  # the module docstring belongs to no function


@pytest.mark.slow
def test_a_mutant_the_tests_miss_is_dropped_and_a_caught_one_becomes_a_task(tmp_path):
    tree = make_project(tmp_path / "proj")
    covered = covered_by_name(tree, ["pkg/calc.py"], ["tests/test_calc.py"])
    mutations = {(m.original.strip(), m.mutated.strip()): m for m in find_mutations(CALC, "pkg/calc.py")}
    survivor = mutations[("if n is None or n > 100:", "if n is None or n >= 100:")]  # no test at 100
    task, reason = _try(PROJECT, tree, Path(sys.executable), survivor, covered, 60, index=1)
    assert task is None and reason == "tests_still_pass"
    caught = mutations[("result += number", "result -= number")]
    task, reason = _try(PROJECT, tree, Path(sys.executable), caught, covered, 60, index=1)
    assert task is not None and reason == ""
    assert (
        task.test_file == "tests/test_calc.py"
        and task.line == 25
        and task.original == "        result += number"
    )
    assert (tree / "pkg" / "calc.py").read_text() == CALC  # the tree is restored after each try
    assert "result" not in task.description and "total" not in task.description
    assert task.description.startswith(
        "The tests in tests/test_calc.py fail since the last change to pkg/calc.py"
    )


@pytest.mark.slow
def test_the_same_seed_builds_the_same_tasks(tmp_path, monkeypatch):
    # the test-name heuristic's path, whether or not this interpreter has pytest-cov (the test extra has it)
    monkeypatch.setattr("benchmarks.repair.build.has_coverage_plugin", lambda python: False)
    tree = make_project(tmp_path / "proj")
    python = Path(sys.executable)
    first, stats = build_project(PROJECT, tree, python, seed=7, quota=3, log=lambda _: None)
    second, _ = build_project(PROJECT, tree, python, seed=7, quota=3, log=lambda _: None)
    assert [t.id for t in first] == ["tinycalc-01", "tinycalc-02", "tinycalc-03"]
    assert first == second
    assert len({t.function for t in first}) == 3  # one task per function
    assert stats.coverage == "names" and sum(stats.kept.values()) == 3
    tried_and_dropped = sum(
        n for reason, n in stats.dropped.items() if reason != "does_not_parse_or_same_ast"
    )
    assert stats.tried == 3 + tried_and_dropped
    write_task_set(tmp_path / "a.json", 7, first, [stats])
    write_task_set(tmp_path / "b.json", 7, second, [stats])
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert read_task_set(tmp_path / "a.json") == (7, first)


@pytest.mark.slow
def test_judge_repaired_wrong_edit_and_restored_tests(tmp_path):
    pristine = make_project(tmp_path / "pristine")
    python = Path(sys.executable)
    covered = covered_by_name(pristine, ["pkg/calc.py"], ["tests/test_calc.py"])
    mutation = next(m for m in find_mutations(CALC, "pkg/calc.py") if m.mutated.strip() == "result -= number")
    work = copy_tree(pristine, tmp_path / "work")
    task, _ = _try(PROJECT, work, python, mutation, covered, 60, index=1)
    run = AgentOutcome("lsp-agent", 1.0, False, 0, steps=3, stop_reason="complete")

    fixed = copy_tree(pristine, tmp_path / "fixed")
    make_buggy(fixed, task)
    before = snapshot(fixed)
    (fixed / "pkg" / "calc.py").write_text(CALC)
    verdict = judge(task, PROJECT, fixed, before, pristine, python, run)
    assert verdict.repaired and verdict.exact_fix and verdict.edited_files == ["pkg/calc.py"]

    cheat = copy_tree(pristine, tmp_path / "cheat")
    make_buggy(cheat, task)
    before = snapshot(cheat)
    (cheat / "tests" / "test_calc.py").write_text("def test_nothing():\n    pass\n")
    (cheat / "pkg" / "calc.py").write_text(mutation.apply(CALC).replace("n > 100", "n > 101"))
    verdict = judge(task, PROJECT, cheat, before, pristine, python, run)
    assert not verdict.repaired and verdict.failure == "wrong_edit"
    assert verdict.touched_tests == ["tests/test_calc.py"]
    assert (cheat / "tests" / "test_calc.py").read_text() == TEST_CALC


def test_failure_classes():
    def outcome(**kw):
        return AgentOutcome("a", 1.0, kw.pop("timed_out", False), 0, **kw)

    assert classify(outcome(steps=5), edited=True, named_passed=True) == "broke_other_tests"
    assert classify(outcome(steps=5), edited=True, named_passed=False) == "wrong_edit"
    assert classify(outcome(timed_out=True), edited=False, named_passed=False) == "timeout"
    assert (
        classify(outcome(stop_reason="max_iterations"), edited=False, named_passed=False) == "iteration_limit"
    )
    assert (
        classify(outcome(stop_reason="LimitsExceeded"), edited=False, named_passed=False) == "iteration_limit"
    )
    assert classify(outcome(steps=4, format_errors=2), edited=False, named_passed=False) == "format_errors"
    assert (
        classify(outcome(stop_reason="RepeatedFormatError"), edited=False, named_passed=False)
        == "format_errors"
    )
    assert classify(outcome(steps=4, stop_reason="complete"), edited=False, named_passed=False) == "no_edit"


def test_lsp_transcript_gives_steps_tokens_format_errors(tmp_path):
    lines = [
        '{"type": "start", "time": 1}',
        '{"type": "request", "messages": [{"role": "user", "content": "fix it"}]}',
        '{"type": "reply", "prompt_tokens": 100, "completion_tokens": 20}',
        '{"type": "request", "messages": [{"role": "user", "content": "Error: your reply could not be parsed as a tool call (x)"}]}',
        '{"type": "reply", "prompt_tokens": 150, "completion_tokens": 30}',
        '{"type": "tool", "name": "edit_file", "ok": true}',
        '{"type": "done", "stop_reason": "complete"}',
        '{"type": "reply", "prompt_tok',
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(textwrap.dedent("\n".join(lines)))
    outcome = AgentOutcome("lsp-agent", 1.0, False, 0)
    read_lsp_transcript(path, outcome)
    assert (outcome.steps, outcome.prompt_tokens, outcome.completion_tokens) == (2, 250, 50)
    assert (outcome.format_errors, outcome.edit_calls, outcome.stop_reason) == (1, 1, "complete")


LSP_FIX = [
    {
        "content": '<THOUGHT>The loop subtracts.</THOUGHT><ACTION>{"name": "edit_file", "arguments": '
        '{"path": "pkg/calc.py", "old_text": "result -= number", "new_text": "result += number"}}</ACTION>',
        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    },
    {
        "content": '<ACTION>{"name": "task_complete", "arguments": {"summary": "fixed total"}}</ACTION>',
        "usage": {"prompt_tokens": 120, "completion_tokens": 8},
    },
]
UNSURE = {"content": "I am not sure.", "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
LINE_FIX = [  # the small profile's sampled line repairs: lines 23-25 of calc.py tie, and are asked about in order
    UNSURE,
    UNSURE,
    {
        "content": "1. `result *= number`\n2. `result += number`",
        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    },
]
MINI_FIX = [
    {
        "content": "THOUGHT: the loop subtracts.\n\n```mswea_bash_command\n"
        "sed -i 's/result -= number/result += number/' pkg/calc.py\n```",
        "usage": {"prompt_tokens": 90, "completion_tokens": 12},
    },
    {"content": "no block here", "usage": {"prompt_tokens": 95, "completion_tokens": 3}},
    {
        "content": "THOUGHT: done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
        "usage": {"prompt_tokens": 110, "completion_tokens": 9},
    },
]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("agent", ["lsp-agent", "lsp-agent-small", "mini-swe-agent"])
def test_a_scripted_agent_repairs_a_task_end_to_end(tmp_path, agent):
    """The real harness path: copy, inject, run the agent's CLI against a scripted server, judge."""
    import importlib.util

    from benchmarks.repair.agents import Budget
    from benchmarks.repair.run import run_one
    from lsp_agent.agent.repair.line_repair import SYSTEM as LINE_SYSTEM
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    if agent == "mini-swe-agent" and importlib.util.find_spec("minisweagent") is None:
        pytest.skip("mini-swe-agent is not installed: pip install -e '.[bench]'")
    pristine = make_project(tmp_path / "pristine")
    python = Path(sys.executable)
    covered = covered_by_name(pristine, ["pkg/calc.py"], ["tests/test_calc.py"])
    mutation = next(m for m in find_mutations(CALC, "pkg/calc.py") if m.mutated.strip() == "result -= number")
    task, _ = _try(PROJECT, pristine, python, mutation, covered, 60, index=1)
    profile = "small" if agent == "lsp-agent-small" else "auto"
    agent = agent.removesuffix("-small")
    script = MINI_FIX if agent == "mini-swe-agent" else LINE_FIX if profile == "small" else LSP_FIX
    with ScriptedModelServer(script) as server:
        budget = Budget("openai/scripted", server.base_url, "sk-test", 6, 120, lsp_profile=profile)
        record = run_one(task, PROJECT, pristine, agent, budget, python, tmp_path / "logs", keep=False)
        first, last = server.requests[0]["messages"], server.requests[-1]["messages"]
    assert record["repaired"] and record["exact_fix"] and record["edited_files"] == ["pkg/calc.py"], record
    if agent == "lsp-agent":
        # the small profile tests each version at once and ends the run when the named tests pass
        expected = (3, 300, 30) if profile == "small" else (2, 220, 18)
        assert (record["steps"], record["prompt_tokens"], record["completion_tokens"]) == expected
        assert record["stop_reason"] == "complete" and record["edit_calls"] == 1
        if profile == "small":  # the named tests ran up front; their spectra point at the line asked about
            assert first[0]["content"] == last[0]["content"] == LINE_SYSTEM
            assert "The failing test:" in first[1]["content"]
            assert "is likely wrong: `result -= number`" in last[1]["content"]
        else:
            task_message = next(
                m["content"] for m in first if m["role"] == "user" and m["content"].startswith("Task:")
            )
            assert "I ran the tests the task names; they fail now" not in task_message
    else:
        assert (record["steps"], record["format_errors"], record["stop_reason"]) == (3, 1, "Submitted")
        assert record["prompt_tokens"] == 295
    assert (pristine / "pkg" / "calc.py").read_text() == CALC  # the task ran in a copy


def test_held_out_projects_are_never_the_tuned_ones_and_have_their_own_task_file():
    """The held-out projects share no name with the projects tuned on, are found by name, and build elsewhere."""
    from benchmarks.repair.__main__ import task_file
    from benchmarks.repair.projects import HELD_OUT_PROJECTS, PROJECTS, project_named

    tuned = {p.name for p in PROJECTS}
    held_out = {p.name for p in HELD_OUT_PROJECTS}
    assert held_out and not tuned & held_out
    assert all(project_named(name).name == name for name in held_out)
    assert task_file(1, held_out_projects=True).name == "tasks-heldout-projects-seed1.json"
    assert task_file(1).name == "tasks-seed1.json"
