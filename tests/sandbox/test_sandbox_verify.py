"""The agent tests its own proposal: task_complete runs the named tests in the sandbox (scripted model, litellm)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import CALC, asker, run_scripted, snapshot

TASK = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."


pytestmark = pytest.mark.usefixtures("litellm_imported", "no_pytest_plugins")


def tool(name: str, **arguments: object) -> dict:
    """A script step with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


FIX = tool("edit_file", path="pkg/calc.py", old_text="return a - b", new_text="return a + b")
WRONG = tool("edit_file", path="pkg/calc.py", old_text="return a - b", new_text="return a * b")
FIX_WRONG = tool("edit_file", path="pkg/calc.py", old_text="return a * b", new_text="return a + b")


async def test_failing_tests_keep_the_run_going_and_passing_ones_finish_it(project: Path) -> None:
    before = snapshot(project)
    asked: list[tuple[str, dict]] = []
    script = [
        WRONG,
        tool("task_complete", summary="looks fine"),
        FIX_WRONG,
        tool("task_complete", summary="add() fixed"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once", asked))
    finishes = [r for r in out.of("tool_result") if r["name"] == "task_complete"]
    assert not finishes[0]["ok"]
    assert "not finished: the tests fail with your changes" in finishes[0]["output"]
    assert "`python -m pytest tests/test_calc.py`: 1 failed" in finishes[0]["output"]
    assert "assert 6 == 5" in finishes[0]["output"]  # the first failure's traceback
    assert out.result.success and out.result.stop_reason == "complete"
    assert out.result.answer == "add() fixed\n\nTests pass: `python -m pytest tests/test_calc.py`: 1 passed."
    assert out.result.proposal is not None and out.result.proposal.summary == out.result.answer
    assert [a[0] for a in asked] == ["run_tests", "run_tests"]  # each test run went through the gate
    assert snapshot(project) == before  # tests ran against the proposal in the sandbox


async def test_finishing_again_unchanged_ends_the_run_saying_the_tests_still_fail(project: Path) -> None:
    script = [WRONG, tool("task_complete", summary="cannot fix"), tool("task_complete", summary="cannot fix")]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"))
    assert not out.result.success and out.result.status == "checks_failed" and out.result.iterations == 3
    assert out.result.checks_failed == ["tests fail: `python -m pytest tests/test_calc.py`: 1 failed"]
    assert (
        out.result.answer
        == "cannot fix\n\nTests still fail: `python -m pytest tests/test_calc.py`: 1 failed."
    )


async def test_refused_exec_finishes_without_running_the_tests(project: Path) -> None:
    asked: list[tuple[str, dict]] = []
    out = await run_scripted(
        project, [FIX, tool("task_complete", summary="fixed")], TASK, permission=asker("reject_once", asked)
    )
    assert out.result.success
    assert out.result.answer == "fixed\n\nTests not run: running them was not permitted."
    assert asked == [("run_tests", {"args": ["tests/test_calc.py"]})]


async def test_off_or_no_named_tests_finish_as_before(project: Path) -> None:
    asked: list[tuple[str, dict]] = []
    out = await run_scripted(
        project,
        [tool("task_complete", summary="done")],
        TASK,
        permission=asker("allow_once", asked),
        test_before_finish="off",
    )
    assert out.result.answer == "done" and asked == []
    out = await run_scripted(
        project,
        [tool("task_complete", summary="done")],
        "explain calc",
        permission=asker("allow_once", asked),
    )
    assert out.result.answer == "done" and asked == []  # no tests named and nothing changed: nothing to run
    question = "Why do the tests in tests/test_calc.py fail?"
    out = await run_scripted(
        project,
        [tool("task_complete", summary="add subtracts")],
        question,
        permission=asker("allow_once", asked),
    )
    assert out.result.answer == "add subtracts" and asked == []  # tests named, but no change proposed


async def test_without_named_tests_the_changed_modules_tests_run(project: Path) -> None:
    asked: list[tuple[str, dict]] = []
    out = await run_scripted(
        project,
        [FIX, tool("task_complete", summary="fixed add")],
        "fix add",
        permission=asker("allow_once", asked),
    )
    assert asked == [("run_tests", {"args": ["tests/test_calc.py"]})]
    assert out.result.answer.endswith("Tests pass: `python -m pytest tests/test_calc.py`: 1 passed.")
    assert CALC in (project / "pkg" / "calc.py").read_text()
