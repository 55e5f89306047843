"""The small profile's repair loop through the real loop, litellm and the sandbox (scripted model, prompt mode):
SEARCH/REPLACE edits, each tested at once, undone when they do not help, the run ending when the tests pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import CALC, asker, run_scripted, snapshot

from lsp_agent.agent.model.parsing import ACTION_STOP_SEQUENCES, BLOCK_STOP_SEQUENCE

pytestmark = pytest.mark.slow  # each run tests in the sandbox (2-10 s)
TASK = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."
SMALL = {"profile": "small", "tool_calling": "prompt", "repair_lines": 0}  # the loop alone (no line repairs)


@pytest.fixture(scope="module", autouse=True)
def _litellm_once() -> None:
    """Import litellm once for this module."""
    from lsp_agent.agent.model.client import get_litellm

    get_litellm()


@pytest.fixture(autouse=True)
def _no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny project needs no pytest plugins: faster test runs in the sandbox."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def block(old: str, new: str, path: str = "pkg/calc.py", thought: str = "add must add") -> dict:
    """A script step: a THOUGHT and one SEARCH/REPLACE block, then text the stop sequence must cut off."""
    text = f"<THOUGHT>{thought}</THOUGHT>\n{path}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
    return {"content": text + "I ran the tests: all pass."}


def action(name: str, **arguments: object) -> dict:
    """A script step with one prompt-mode ACTION."""
    import json

    return {"content": f"<ACTION>{json.dumps({'name': name, 'arguments': arguments})}</ACTION>"}


async def test_a_wrong_edit_is_undone_and_a_passing_one_ends_the_run(project: Path) -> None:
    before = snapshot(project)
    asked: list[tuple[str, dict]] = []
    script = [block("    return a - b", "    return a * b"), block("return a - b", "return a + b")]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once", asked), **SMALL)
    first = out.requests[0]
    assert first["stop"] == [*ACTION_STOP_SEQUENCES, BLOCK_STOP_SEQUENCE]
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # the worked example before the task
    assert (
        "SEARCH/REPLACE" in first["messages"][0]["content"]
        and "edit_file(" not in first["messages"][0]["content"]
    )
    assert first["messages"][-1]["content"].endswith("Fix it with one SEARCH/REPLACE edit.")
    edits = [r for r in out.of("tool_result") if r["name"] == "edit_file"]
    assert not edits[0]["ok"] and "did not fix it, so it was undone" in edits[0]["output"]
    assert "assert 6 == 5" in edits[0]["output"]  # the failure with the wrong edit
    assert edits[1]["ok"] and "The tests the task names pass now" in edits[1]["output"]
    second = out.requests[1]
    assert second["temperature"] == 0.7 and second["seed"] == 1  # sampled differently after the failure
    history = second["messages"][4]["content"]
    assert history.endswith(">>>>>>> REPLACE") and "all pass" not in history  # no invented result kept
    assert out.result.success and out.result.stop_reason == "complete" and out.result.iterations == 2
    assert out.result.answer == "add must add\n\nTests pass: `python -m pytest tests/test_calc.py`: 1 passed."
    assert out.result.proposal is not None
    assert out.result.proposal.changes[0].new_text == CALC.replace("a - b", "a + b")
    # up front, after each edit and the whole suite once the named tests pass: all through the gate
    assert [a[0] for a in asked] == ["run_tests"] * 4 and asked[3][1] == {"args": []}
    assert snapshot(project) == before  # nothing applied, the tests ran in the sandbox


async def test_the_same_failed_edit_is_refused_and_an_edit_of_the_test_is_explained(
    project: Path, tmp_path: Path
) -> None:
    wrong = block("    return a - b", "    return a * b")
    script = [
        wrong,
        wrong,
        block("    assert add(2, 3) == 5", "    assert add(2, 3) == -1"),
        block(
            "    return a - b", "    return b + a", path="calc.py"
        ),  # a wrong path: the one file that has it
    ]
    transcript = tmp_path / "run.jsonl"
    out = await run_scripted(
        project, script, TASK, permission=asker("allow_once"), transcript=str(transcript), **SMALL
    )
    outputs = [r["output"] for r in out.of("tool_result") if r["name"] == "edit_file"]
    assert "you made this same edit before and it did not fix the tests" in outputs[1]
    assert "old_text is line 5 of the test tests/test_calc.py, not code of the project" in outputs[2]
    assert "pass now" in outputs[3]
    later = out.requests[3]["messages"]  # system, example, task, then only the latest failed attempt
    assert [m["role"] for m in later] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert (
        "assert add(2, 3) == -1" in later[4]["content"] and "not code of the project" in later[5]["content"]
    )
    assert out.result.success and out.result.proposal.changes[0].path == "pkg/calc.py"
    from lsp_agent.replay.recording import load_recording

    recorded = load_recording(transcript).requests[3]  # the trimmed conversation is recorded whole
    assert recorded.first_index == 0 and recorded.messages == later


async def test_an_edit_that_breaks_a_passing_test_is_undone_naming_it_not_its_traceback(
    project: Path,
) -> None:
    (project / "pkg" / "calc.py").write_text("def sub(a, b):\n    return a - b\n\n\n" + CALC)
    (project / "tests" / "test_calc.py").write_text(
        "from pkg.calc import add, sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n"
    )
    script = [
        block("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return a + b"),
        block("def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **SMALL)
    undone = next(r for r in out.of("tool_result") if r["name"] == "edit_file")["output"]
    assert "broke tests that passed before (tests/test_calc.py::test_sub), so it was undone" in undone
    assert "assert 8 == 2" not in undone and "2 failed" in undone  # names and counts, not the new traceback
    assert out.result.success and out.result.stop_reason == "complete"


async def test_finishing_with_nothing_changed_is_refused_five_times(project: Path) -> None:
    script = [action("task_complete", summary=f"try {n}") for n in range(6)]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **SMALL)
    finishes = [r for r in out.of("tool_result") if r["name"] == "task_complete"]
    assert [f["ok"] for f in finishes] == [False] * 5 + [True]
    assert "nothing is changed yet, and the tests the task names fail" in finishes[0]["output"]
    assert finishes[0]["output"].endswith("Make the fix first.")
    assert finishes[4]["output"].endswith("calling task_complete again finishes without a change.")
    assert out.result.success and out.result.answer == "try 5" and out.result.proposal is None


async def test_without_exec_permission_edits_stay_untested(project: Path) -> None:
    script = [block("return a - b", "return a * b"), action("task_complete", summary="changed")]
    out = await run_scripted(project, script, TASK, permission=asker("reject_once"), **SMALL)
    edit = next(r for r in out.of("tool_result") if r["name"] == "edit_file")
    assert edit["ok"] and "The tests were not run: running them was not permitted." in edit["output"]
    assert out.result.proposal is not None and "a * b" in out.result.proposal.changes[0].new_text


async def test_plain_answers_while_the_tests_fail_are_refused_and_forgotten(project: Path) -> None:
    script = [
        {"content": "Error: old_text was not found."},
        {"content": "I cannot fix this."},
        block("return a - b", "return a + b"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **SMALL)
    refusal = out.requests[1]["messages"][-1]["content"]
    assert refusal.startswith("Your reply has no edit and no ACTION, and the tests the task names still fail")
    third = out.requests[2]
    assert (
        third["temperature"] == 1.0 and third["seed"] == 2
    )  # each refused answer counts as a failed attempt
    later = third["messages"]  # system, example, task, then only the latest refused answer
    assert [m["role"] for m in later] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert later[4]["content"] == "I cannot fix this."
    assert out.result.success and out.result.stop_reason == "complete" and out.result.proposal is not None


async def test_numbered_lines_written_back_with_a_change_are_an_edit(project: Path) -> None:
    listing = {
        "content": "Here is the fixed code:\n\npkg/calc.py\n```\n1: def add(a, b):\n2:   return a + b\n```"
    }
    out = await run_scripted(project, [listing], TASK, permission=asker("allow_once"), **SMALL)
    edit = next(r for r in out.of("tool_result") if r["name"] == "edit_file")
    assert edit["ok"] and "The tests the task names pass now" in edit["output"]
    assert out.result.success and out.result.stop_reason == "complete"
    assert out.result.proposal.changes[0].new_text == CALC.replace("a - b", "a + b")  # at the file's indent


async def test_an_incomplete_block_gets_the_block_format_back(project: Path) -> None:
    cut = {"content": "pkg/calc.py\n<<<<<<< SEARCH\n1: def add(a, b):\n2:     return a - b\n"}
    shown = block("1: def add(a, b):\n2:     return a - b", "1: def add(a, b):\n2:     return a + b")
    out = await run_scripted(project, [cut, shown], TASK, permission=asker("allow_once"), **SMALL)
    correction = out.requests[1]["messages"][-1]["content"]
    assert correction.startswith(
        "Error: your reply could not be read (the SEARCH/REPLACE block is incomplete"
    )
    edit = next(r for r in out.of("tool_result") if r["name"] == "edit_file")
    assert edit["ok"] and "line-number prefixes in old_text/new_text were left out" in edit["output"]
    assert out.result.success and out.result.stop_reason == "complete"
