"""The `asks` benchmark: one line-repair request about the bug's own line, with and without the failing test,
judged by whether a version gives the project's file back; through the real child test run and litellm's HTTP path
to a scripted server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_repair_sites import total_task
from test_repair_tasks import CALC, PROJECT

from benchmarks.repair.asks import VARIANTS, ask_task, asks_table, fixes, requests, shown_lines
from benchmarks.repair.build import Task
from benchmarks.repair.mutations import find_mutations
from benchmarks.repair.run import buggy_source
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.agent.repair.line_repair import REPLY_TOKENS, TEMPERATURE
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer

FIX = "1. result -= number\n2. `result += number`\n3. result *= number"
WRONG = "1. result -= number\n2. result = number\n3.     return result"


def _task() -> Task:
    """A task whose bug turns total()'s `result += number` into `result -= number` (no test run needed)."""
    mutation = next(m for m in find_mutations(CALC, "pkg/calc.py") if m.mutated.strip() == "result -= number")
    return Task(
        id="tinycalc-01",
        project="tinycalc",
        version="0.1",
        file="pkg/calc.py",
        line=mutation.line,
        kind=mutation.kind,
        function=mutation.function,
        test_file="tests/test_calc.py",
        test_command="python -m pytest tests/test_calc.py",
        description="The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it.",
        original=mutation.original,
        mutated=mutation.mutated,
        failing_tests=1,
    )


def test_a_version_counts_as_the_fix_only_when_the_file_parses_to_the_projects_own() -> None:
    task = _task()
    lines = buggy_source(task, CALC).splitlines()
    shown = shown_lines(task, lines)
    assert "    result = 0" in shown and task.mutated not in shown  # the lines around it, not the bug's own
    assert fixes(task, CALC, lines, FIX, shown) == (2, True)  # the buggy line echoed is not a version
    assert fixes(task, CALC, lines, WRONG, shown) == (1, False)  # `return result` is an echo of a shown line
    same_result = "1. result = result + number"
    assert fixes(task, CALC, lines, same_result, shown) == (1, False)  # same result, other tree
    assert fixes(task, CALC, lines, "Sure! The loop should add.", shown) == (0, False)


def test_the_baseline_request_is_ours_without_the_failing_test() -> None:
    task = _task()
    lines = buggy_source(task, CALC).splitlines()
    ours, baseline = requests(task, "tests/test_calc.py:2: AssertionError: assert -6 == 6", lines).values()
    assert "The failing test:\ntests/test_calc.py:2: AssertionError" in ours
    assert "failing test" not in baseline and "AssertionError" not in baseline
    assert ours.replace(
        "The failing test:\ntests/test_calc.py:2: AssertionError: assert -6 == 6\n\n", ""
    ) == (baseline)
    assert baseline.endswith(
        f"Line {task.line} is likely wrong: `result -= number`. Write 5 different corrected "
        f"versions of line {task.line}, numbered 1-5, each one full line of code, no "
        "explanations."
    )


def test_the_table_counts_asks_and_tasks_fixed_and_the_ratio_to_the_baseline() -> None:
    def record(task: str, variant: str, fixed: bool, site: int | None = 2) -> dict:
        return {
            "task": task,
            "variant": variant,
            "fixed": fixed,
            "site": site,
            "versions": 4,
            "seconds": 10.0,
        }

    results = [
        record("a", VARIANTS[0], True),
        record("a", VARIANTS[0], True),
        record("b", VARIANTS[0], True, site=None),  # fixed, but line repairs would not ask about it
        record("b", VARIANTS[0], False, site=None),
        record("a", VARIANTS[1], True),
        record("a", VARIANTS[1], False),
        record("b", VARIANTS[1], False, site=None),
        record("b", VARIANTS[1], False, site=None),
    ]
    rows = asks_table(results, samples=2).splitlines()
    assert rows[1].split()[-5:] == ["3/4", "2/2", "1/2", "4.0", "10.0"]
    assert rows[2].split()[-5:] == ["1/4", "1/2", "1/2", "4.0", "10.0"]
    assert rows[3] == "ratio asks fixed, with failure / without failure: 3.00x (2 sample(s) per task)"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_each_variant_is_asked_with_the_agents_sampling_and_judged(tmp_path: Path) -> None:
    pristine, python, task = total_task(tmp_path)
    # the failing test's assertion helps the scripted model as it should help a real one
    script = [{"match": "assert -6 == 6", "content": FIX}] * 2 + [{"content": WRONG}] * 2
    with ScriptedModelServer(script) as server:
        client = ModelClient(Settings(model="openai/local", api_base=server.base_url), stream=True)
        records = asyncio.run(ask_task(task, PROJECT, pristine, python, client, samples=2, budget=6))
        bodies = server.requests
    assert [(r["variant"], r["seed"], r["fixed"], r["versions"]) for r in records] == [
        (VARIANTS[0], 1, True, 2),
        (VARIANTS[0], 2, True, 2),
        (VARIANTS[1], 1, False, 1),
        (VARIANTS[1], 2, False, 1),
    ]
    assert {r["site"] for r in records} == {3}  # as `sites` ranks it
    assert [b["seed"] for b in bodies] == [1, 2, 1, 2]
    assert {(b["temperature"], b["max_tokens"]) for b in bodies} == {(TEMPERATURE, REPLY_TOKENS)}
    assert (pristine / "pkg" / "calc.py").read_text() == CALC  # the bug went into a copy


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_infill_variant_sends_the_agents_fill_in_the_middle_request_once(tmp_path: Path) -> None:
    from lsp_agent.agent.repair.line_infill import MAX_TOKENS, STOP

    pristine, python, task = total_task(tmp_path)
    script = [{"content": WRONG}] * 2 + [{"content": "        result += number\n\n    # done"}]
    with ScriptedModelServer(script) as server:
        client = ModelClient(Settings(model="openai/local", api_base=server.base_url), stream=True)
        records = asyncio.run(
            ask_task(task, PROJECT, pristine, python, client, samples=1, budget=6, infill="qwen")
        )
        bodies = server.requests
    assert [(r["variant"], r["fixed"], r["versions"]) for r in records] == [
        (VARIANTS[0], False, 1),
        (VARIANTS[1], False, 1),
        (VARIANTS[2], True, 1),
    ]
    infill = bodies[2]
    assert "messages" not in infill and infill["prompt"].startswith("<|fim_prefix|>")
    assert task.mutated.strip() not in infill["prompt"]  # the model never sees the line it fills in
    assert (infill["temperature"], infill["max_tokens"], infill["stop"]) == (0, MAX_TOKENS, STOP)
    rows = asks_table(records, samples=1).splitlines()
    assert rows[-1] == "ratio asks fixed, infill (1 request) / with failure: inf"
