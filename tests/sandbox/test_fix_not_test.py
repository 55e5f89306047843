"""A change to the tests the task names is never the fix (unless the task asks for test changes), in the small
profile's tested edits and in the full profile's tests before finishing, through the real loop, litellm and the
sandbox (scripted model, prompt mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import CALC, TEST_CALC, asker, run_scripted, snapshot

pytestmark = pytest.mark.slow  # each run tests in the sandbox (2-10 s)
TASK = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."
SMALL = {"profile": "small", "tool_calling": "prompt", "repair_lines": 0}  # the loop alone (no line repairs)
FULL = {"profile": "full", "tool_calling": "prompt"}


@pytest.fixture(autouse=True)
def _no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny project needs no pytest plugins: faster test runs in the sandbox."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def block(path: str, old: str, new: str) -> dict:
    """A script step: one SEARCH/REPLACE block."""
    return {
        "content": f"<THOUGHT>fix</THOUGHT>\n{path}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
    }


def action(name: str, **arguments: object) -> dict:
    """A script step with one prompt-mode ACTION."""
    return {"content": f"<ACTION>{json.dumps({'name': name, 'arguments': arguments})}</ACTION>"}


async def test_the_small_loop_refuses_rewriting_the_failing_assertion_and_the_code_fix_ends_the_run(
    project: Path,
) -> None:
    script = [
        block("tests/test_calc.py", "    assert add(2, 3) == 5", "    assert add(2, 3) == -1"),
        block("pkg/calc.py", "    return a - b", "    return a + b"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **SMALL)
    edits = [r for r in out.of("tool_result") if r["name"] == "edit_file"]
    assert not edits[0]["ok"] and edits[0]["output"] == (
        "Error: tests/test_calc.py holds the tests the task names: changing them (or their expected values) does "
        "not fix the bug, so that edit was not made. Fix the code the test calls so that the test passes as it is "
        "written."
    )
    assert edits[1]["ok"] and "The tests the task names pass now" in edits[1]["output"]
    assert out.result.success and [c.path for c in out.result.proposal.changes] == ["pkg/calc.py"]
    assert (
        out.requests[1]["temperature"] == 0.7
    )  # counted as a failed attempt: the next reply is sampled warmer


async def test_a_task_that_asks_for_test_changes_may_change_the_named_tests(project: Path) -> None:
    (project / "pkg" / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    (project / "tests" / "test_calc.py").write_text(TEST_CALC.replace("== 5", "== 6"))
    task = "Update the test in tests/test_calc.py: add(2, 3) is 5."
    script = [block("tests/test_calc.py", "    assert add(2, 3) == 6", "    assert add(2, 3) == 5")]
    out = await run_scripted(project, script, task, permission=asker("allow_once"), **SMALL)
    assert out.result.success and [c.path for c in out.result.proposal.changes] == ["tests/test_calc.py"]


async def test_the_full_profile_finish_undoes_a_test_edit_that_made_the_tests_pass(project: Path) -> None:
    before = snapshot(project)
    script = [
        action("edit_file", path="tests/test_calc.py", old_text="== 5", new_text="== -1"),
        action("task_complete", summary="the tests pass"),  # they would, with the expectation rewritten
        action("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b"),
        action("task_complete", summary="fixed add"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **FULL)
    finishes = [r for r in out.of("tool_result") if r["name"] == "task_complete"]
    assert not finishes[0]["ok"] and finishes[0]["output"] == (
        "Error: not finished: your changes to tests/test_calc.py (the tests the task names) were undone, as a "
        "change to the tests does not count as the fix. Fix the code the tests call, then call task_complete again."
    )
    assert (
        finishes[1]["ok"]
        and "Tests pass: `python -m pytest tests/test_calc.py`: 1 passed." in finishes[1]["output"]
    )
    assert out.result.success and [c.path for c in out.result.proposal.changes] == ["pkg/calc.py"]
    assert out.result.proposal.changes[0].new_text == CALC.replace("a - b", "a + b")
    assert snapshot(project) == before


async def test_a_full_profile_run_that_only_rewrote_the_test_does_not_finish_as_passing(
    project: Path,
) -> None:
    script = [
        action("edit_file", path="tests/test_calc.py", old_text="== 5", new_text="== -1"),
        action("task_complete", summary="the tests pass"),
        action("task_complete", summary="the tests pass"),
        action("task_complete", summary="the tests pass"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), max_iterations=4, **FULL)
    assert out.result.proposal is None or not out.result.proposal.changes  # the test edit was undone
    assert "Tests pass" not in out.result.answer
