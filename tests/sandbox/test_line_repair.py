"""Sampled line repairs through the real run, litellm, coverage and the sandbox (scripted model, prompt mode): the
versions of the most suspicious line are tested one by one before the loop, a passing one ends the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_sandbox_fault_lines
from sandbox_helpers import asker, run_scripted, snapshot
from test_sandbox_fault_lines import BUGGY_LINE, STATS, TASK

from lsp_agent.agent.repair.line_infill import MAX_TOKENS as INFILL_TOKENS
from lsp_agent.agent.repair.line_infill import STOP
from lsp_agent.agent.repair.line_repair import REPLY_TOKENS, SYSTEM, TEMPERATURE
from lsp_agent.cli.main import main
from lsp_agent.replay.recording import load_recording
from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins", "litellm_imported")]
stats_project = test_sandbox_fault_lines.stats_project  # the fixture: clamp() with a one-line bug
SMALL = {"tool_calling": "prompt", "profile": "small", "max_iterations": 6}
WRONG_THEN_RIGHT = (
    "Here are 5 different corrected versions of line 12:\n\n1. `return lo if x > hi else x`\n2. `return hi`\n"
    "3. `return lo`"
)
RIGHT_EDIT = (  # the loop's fix, as a SEARCH/REPLACE block
    "<THOUGHT>hi</THOUGHT>\npkg/stats.py\n<<<<<<< SEARCH\n    if x > hi:\n        return lo\n=======\n"
    "    if x > hi:\n        return hi\n>>>>>>> REPLACE"
)
FIXED = STATS.replace("        return lo\n    return x", "        return hi\n    return x")


def line_edits(out: Any) -> list[dict]:
    """The tool results of the edits the line repairs made."""
    return [r for r in out.of("tool_result") if r["id"].startswith("line-repair-")]


async def test_a_sampled_version_that_passes_ends_the_run_before_the_loop(stats_project: Path) -> None:
    before = snapshot(stats_project)
    out = await run_scripted(
        stats_project, [{"content": WRONG_THEN_RIGHT}], TASK, permission=asker("allow_once"), **SMALL
    )
    assert len(out.requests) == 1  # one request for versions, no loop
    request = out.requests[0]
    assert request["messages"][0]["content"] == SYSTEM
    asked = request["messages"][1]["content"]
    assert asked.startswith(TASK) and "assert clamp(50, 0, 10) == 10" in asked  # the task and its failure
    assert (
        f"{BUGGY_LINE}:         return lo" in asked
        and f"Line {BUGGY_LINE} is likely wrong: `return lo`" in asked
    )
    assert (
        request["temperature"] == TEMPERATURE
        and request["max_tokens"] == REPLY_TOKENS
        and "stop" not in request
    )
    edits = line_edits(out)
    assert [e["id"] for e in edits] == [
        "line-repair-1-1",
        "line-repair-1-2",
    ]  # `return lo` again is not tried
    assert not edits[0]["ok"] and "did not fix it, so it was undone" in edits[0]["output"]
    assert edits[1]["ok"] and "The tests the task names pass now" in edits[1]["output"]
    result = out.result
    assert result.success and result.stop_reason == "complete" and result.iterations == 1
    assert result.answer.startswith(f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return hi`.")
    assert "Tests pass: `python -m pytest tests/test_stats.py`: 6 passed" in result.answer
    assert result.proposal is not None and result.proposal.changes[0].new_text == FIXED
    assert snapshot(stats_project) == before  # a proposal only; the tests ran in the sandbox


async def test_a_version_that_passes_the_named_tests_but_breaks_others_is_undone(stats_project: Path) -> None:
    # `return 10` passes tests/test_stats.py (its hi is always 10) but breaks a test elsewhere that passes on the
    # buggy code; the whole suite runs once the named tests pass, and the next version is tried. A test that fails
    # without the proposal too counts against neither.
    other = (
        "from pkg.stats import clamp\n\n\ndef test_clamp_to_a_point():\n    assert clamp(50, 0, 0) == 0\n\n\n"
        "def test_already_failing():\n    assert clamp(1, 0, 2) == 2\n"
    )
    (stats_project / "tests" / "test_other.py").write_text(other)
    reply = "1. `return 10`\n2. `return hi`"
    out = await run_scripted(
        stats_project, [{"content": reply}], TASK, permission=asker("allow_once"), **SMALL
    )
    edits = line_edits(out)
    assert not edits[0]["ok"] and edits[0]["output"].startswith(
        "Error: that edit makes the tests the task names pass, but breaks tests elsewhere that pass without it "
        "(tests/test_other.py::test_clamp_to_a_point), so it was undone (pkg/stats.py is as before; the whole "
        "suite with it: `python -m pytest`: 2 failed, 6 passed)."
    )
    assert edits[1]["ok"] and edits[1]["output"].endswith(
        "The tests the task names pass now: `python -m pytest tests/test_stats.py`: 6 passed. "
        "The whole suite: `python -m pytest`: 1 failed, 7 passed."
    )
    assert out.result.success and out.result.proposal.changes[0].new_text == FIXED
    assert out.result.answer.endswith(  # the test still failing elsewhere is in the answer too
        "Tests pass: `python -m pytest tests/test_stats.py`: 6 passed. "
        "The whole suite: `python -m pytest`: 1 failed, 7 passed."
    )
    assert len(out.requests) == 1  # a test failing for reasons of its own does not send the search on


# Tests elsewhere that the bug fails too: `return 10` fixes clamp(20, 0, 10) but not clamp(50, 0, 20).
SAME_BUG_ELSEWHERE = (
    "from pkg.stats import clamp\n\n\ndef test_high_again():\n    assert clamp(20, 0, 10) == 10\n\n\n"
    "def test_high_twenty():\n    assert clamp(50, 0, 20) == 20\n"
)
PARTIAL = STATS.replace("        return lo\n    return x", "        return 10\n    return x")


async def test_a_version_that_leaves_tests_of_the_same_bug_failing_gives_way_to_one_that_fixes_them(
    stats_project: Path,
) -> None:
    (stats_project / "tests" / "test_other.py").write_text(SAME_BUG_ELSEWHERE)
    reply = "1. `return 10`\n2. `return hi`"
    out = await run_scripted(
        stats_project, [{"content": reply}], TASK, permission=asker("allow_once"), **SMALL
    )
    edits = line_edits(out)
    assert edits[0]["ok"] and edits[0]["output"].endswith(  # passes the named tests, fixes test_high_again
        "The whole suite: `python -m pytest`: 1 failed, 7 passed."
    )
    assert edits[1]["ok"] and edits[1]["output"].endswith(
        "The tests the task names pass now: `python -m pytest tests/test_stats.py`: 6 passed. "
        "The whole suite: `python -m pytest`: 8 passed."
    )
    assert out.result.success and out.result.proposal.changes[0].new_text == FIXED
    assert out.result.answer.startswith(f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return hi`.")


async def test_when_no_version_fixes_the_rest_the_run_ends_with_the_partial_fix(stats_project: Path) -> None:
    (stats_project / "tests" / "test_other.py").write_text(SAME_BUG_ELSEWHERE)
    script = [{"content": "1. `return 10`"}, {"content": "I am not sure."}]
    out = await run_scripted(
        stats_project, script, TASK, permission=asker("allow_once"), repair_lines=2, **SMALL
    )
    assert len(out.requests) == 2  # the next line was asked about before settling
    assert [e["ok"] for e in line_edits(out)] == [True]
    result = out.result
    # the named tests pass, but tests the run ran still fail: its checks failed, never a plain success
    assert not result.success and result.status == "checks_failed"
    assert result.stop_reason == "complete" and result.iterations == 2
    still = "`python -m pytest`: 1 failed, 7 passed; still failing: tests/test_other.py::test_high_twenty"
    assert result.checks_failed == [f"tests fail: {still}"]
    assert result.proposal.changes[0].new_text == PARTIAL and result.proposal.checks_failed == [
        f"tests fail: {still}"
    ]
    (done,) = out.of("done")
    assert done["status"] == "checks_failed" and done["checksFailed"] == result.checks_failed
    assert result.answer.startswith(
        f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return 10`. No version tried made the whole suite "
        f"pass: {still}."
    )
    assert result.answer.endswith(
        "Tests pass: `python -m pytest tests/test_stats.py`: 6 passed. "
        "The whole suite: `python -m pytest`: 1 failed, 7 passed."
    )


async def test_when_no_version_passes_the_loop_takes_over_with_the_steps_left(stats_project: Path) -> None:
    prose = {  # a version that fixes one of the two failing tests, one that fixes none, prose and a stray line
        "content": "The bug is that lo is returned.\n1. `return hi if x < 100 else lo`\n2. `return lo + 0`\n"
        "3. `x = hi`\nThis should fix it."
    }
    tried_again = (  # the second version again, written with one line of context more than the repairs used
        "<THOUGHT>again</THOUGHT>\npkg/stats.py\n<<<<<<< SEARCH\n    if x > hi:\n        return lo\n    return x\n"
        "=======\n    if x > hi:\n        return lo + 0\n    return x\n>>>>>>> REPLACE"
    )
    script = [prose, {"content": tried_again}, {"content": RIGHT_EDIT}]
    out = await run_scripted(
        stats_project, script, TASK, permission=asker("allow_once"), repair_lines=1, **SMALL
    )
    edits = line_edits(out)
    assert [e["ok"] for e in edits] == [True, False]  # prose and `x = hi` are not tried
    assert "Fewer tests fail now" in edits[0]["output"] and "did not fix it" in edits[1]["output"]
    loop = out.requests[1]
    assert [m["role"] for m in loop["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]  # the loop as before
    assert "temperature" not in loop and loop["max_tokens"] != REPLY_TOKENS  # the sampling does not leak
    assert "Fewer tests fail now" not in loop["messages"][-1]["content"]  # the progress edit left no trace
    outputs = [
        r["output"]
        for r in out.of("tool_result")
        if r["name"] == "edit_file" and not r["id"].startswith("line-")
    ]
    assert "you made this same edit before and it did not fix the tests" in outputs[0]
    assert (
        out.result.success and out.result.proposal.changes[0].new_text == FIXED
    )  # the helping version undone
    assert out.result.iterations == 3  # the line request counts as a step of max_iterations


async def test_the_condition_a_suspicious_line_runs_under_is_asked_about_next(stats_project: Path) -> None:
    script = [{"content": "I am not sure."}, {"content": "1. `if x >= hi:`"}, {"content": RIGHT_EDIT}]
    out = await run_scripted(
        stats_project, script, TASK, permission=asker("allow_once"), repair_lines=2, **SMALL
    )
    asked = [request["messages"][-1]["content"] for request in out.requests[:2]]
    assert f"Line {BUGGY_LINE} is likely wrong: `return lo`" in asked[0]
    assert f"Line {BUGGY_LINE - 1} is likely wrong: `if x > hi:`" in asked[1]  # the `if` that lets it run
    assert [e["ok"] for e in line_edits(out)] == [False]  # `if x >= hi:` tried and undone
    assert out.result.success and out.result.proposal.changes[0].new_text == FIXED  # the loop's fix


async def test_a_refused_test_run_stops_the_repairs_and_leaves_no_untested_version(
    stats_project: Path,
) -> None:
    answers = iter(["allow_once"])  # the up-front run only; every later run_tests is rejected

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        return next(answers, "reject_once")

    finish = '<THOUGHT>stop</THOUGHT>\n<ACTION>{"name": "task_complete", "arguments": {"summary": "gave up"}}</ACTION>'
    out = await run_scripted(
        stats_project, [{"content": WRONG_THEN_RIGHT}, {"content": finish}], TASK, permission=ask, **SMALL
    )
    assert len(line_edits(out)) == 1  # stopped after the first version's run was refused
    assert "The tests were not run" in line_edits(out)[0]["output"]
    assert out.result.proposal is None or all(
        c.new_text != STATS.replace("return lo\n    return x", "return lo if x > hi else x\n    return x")
        for c in out.result.proposal.changes
    )
    assert out.requests[1]["messages"][0]["content"] != SYSTEM  # the loop went on


async def test_a_plain_answer_while_the_tests_still_fail_with_a_kept_edit_is_refused(
    stats_project: Path,
) -> None:
    # the line repairs' version that fixes one of the two failing tests is undone; the loop makes the same call
    # again (kept as progress, as in inflection-05), then answers in prose: the answer cannot end the run with a
    # test failing
    helping = "1. `return hi if x < 100 else lo`"
    again = (
        "<THOUGHT>clamp</THOUGHT>\npkg/stats.py\n<<<<<<< SEARCH\n    if x > hi:\n        return lo\n=======\n"
        "    if x > hi:\n        return hi if x < 100 else lo\n>>>>>>> REPLACE"
    )
    finish = (
        "<THOUGHT>hi</THOUGHT>\npkg/stats.py\n<<<<<<< SEARCH\n        return hi if x < 100 else lo\n=======\n"
        "        return hi\n>>>>>>> REPLACE"
    )
    script = [{"content": helping}, {"content": again}, {"content": "The bug is fixed."}, {"content": finish}]
    out = await run_scripted(
        stats_project, script, TASK, permission=asker("allow_once"), repair_lines=1, **SMALL
    )
    kept = [r for r in out.of("tool_result") if r["name"] == "edit_file" and not r["id"].startswith("line-")]
    assert "Fewer tests fail now (2 before, 1 now); the edit is kept." in kept[0]["output"]
    edits = [c["arguments"] for c in out.of("tool_call") if c["name"] == "edit_file"]
    assert edits[0] == edits[1]  # the loop's first edit is the very call the line repairs made
    assert "You made this exact call" not in kept[0]["output"]  # the model never saw the line repairs' calls
    refusal = out.requests[3]["messages"][-1]["content"]
    assert refusal.startswith(
        "Your reply has no edit and no ACTION, and the tests the task names still fail with the changes so far "
        "(`python -m pytest tests/test_stats.py`: 1 failed, 5 passed)."
    )
    assert out.result.success and out.result.stop_reason == "complete"
    assert out.result.proposal.changes[0].new_text == FIXED


async def test_requests_left_ask_about_the_best_line_again_without_the_versions_tried(
    stats_project: Path,
) -> None:
    # 3 lines, one request each; `repairLines` has 2 requests left and the loop keeps 2 of 7 steps, so the best
    # line is asked about again: its first version is not tried twice, the new one passes
    unsure = {"content": "I am not sure."}
    script = [{"content": "1. `return lo if x > hi else x`"}, unsure, unsure, {"content": WRONG_THEN_RIGHT}]
    out = await run_scripted(
        stats_project,
        script,
        TASK,
        permission=asker("allow_once"),
        **{**SMALL, "max_iterations": 7, "repair_lines": 5},
    )
    asked = [request["messages"][-1]["content"] for request in out.requests]
    wrong = [a.split("is likely wrong: ")[1].split(".")[0] for a in asked]
    assert len(asked) == 4 and asked[3] == asked[0]  # the same request, another sample
    assert wrong == ["`return lo`", "`if x > hi:`", "`if x < lo:`", "`return lo`"]
    assert [request["seed"] for request in out.requests] == [1, 2, 3, 4]
    edits = line_edits(out)
    assert [e["id"] for e in edits] == ["line-repair-1-1", "line-repair-4-1"]  # `return hi`: the only new one
    assert not edits[0]["ok"] and edits[1]["ok"]
    result = out.result
    assert result.success and result.iterations == 4 and result.proposal.changes[0].new_text == FIXED
    assert result.answer.startswith(f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return hi`.")


async def test_with_an_infill_template_the_model_fills_in_the_line_without_seeing_it(
    stats_project: Path,
) -> None:
    out = await run_scripted(
        stats_project,
        [{"content": "        return hi\n\n    # the rest"}],
        TASK,
        permission=asker("allow_once"),
        infill_template="qwen",
        **SMALL,
    )
    assert len(out.requests) == 1 and "messages" not in out.requests[0]  # a text completion (/v1/completions)
    request = out.requests[0]
    head, tail = STATS.split("        return lo\n    return x")
    assert (
        request["prompt"]
        == f"<|fim_prefix|>{head}<|fim_suffix|>\n    return x{tail.rstrip()}\n<|fim_middle|>"
    )
    assert request["temperature"] == 0 and request["max_tokens"] == INFILL_TOKENS and request["stop"] == STOP
    assert [e["ok"] for e in line_edits(out)] == [True]
    result = out.result
    assert result.success and result.iterations == 1 and result.proposal.changes[0].new_text == FIXED
    assert result.answer.startswith(f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return hi`.")


@pytest.mark.parametrize("setting", ["auto", ""])
async def test_auto_fills_in_lines_with_a_code_model_it_knows_by_name(
    stats_project: Path, setting: str
) -> None:
    # a Qwen2.5-Coder behind an OpenAI-compatible server: `auto` (the default) sends its preset's prompt; "" is off
    script = [{"content": "        return hi\n\n"}, {"content": "1. `return hi`"}]
    out = await run_scripted(
        stats_project,
        script,
        TASK,
        permission=asker("allow_once"),
        model="openai/Qwen2.5-Coder-1.5B-Instruct",
        infill_template=setting,
        **SMALL,
    )
    assert len(out.requests) == 1 and out.result.success
    if setting:
        assert out.requests[0]["prompt"].startswith("<|fim_prefix|>")
    else:
        assert "prompt" not in out.requests[0] and out.requests[0]["messages"][0]["content"] == SYSTEM


def test_ask_apply_refuses_a_partial_fix(
    stats_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # through the CLI: the partial fix ends the run with exit status 3, and --apply does not write it
    (stats_project / "tests" / "test_other.py").write_text(SAME_BUG_ELSEWHERE)
    before = snapshot(stats_project)
    monkeypatch.setenv("LSP_AGENT_REPAIR_LINES", "2")
    with ScriptedModelServer([{"content": "1. `return 10`"}, {"content": "I am not sure."}]) as server:
        flags = ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "k"]
        flags += ["--tool-calling", "prompt", "--profile", "small", "--max-iterations", "6", "--allow-exec"]
        status = main(["ask", TASK, "--repo", str(stats_project), *flags, "--apply"])
    out = capsys.readouterr().out
    assert status == 3, out
    assert "still failing: tests/test_other.py::test_high_twenty" in out
    assert "not applied: the proposal fails its own checks (`--apply-failing` writes it anyway)" in out
    assert out.rstrip().splitlines()[-1].startswith("checks failed (complete)")
    assert snapshot(stats_project) == before  # nothing written


def test_a_server_without_text_completions_turns_infill_off_for_line_requests(
    stats_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the infill request fails (a server that only chats); the same line is asked about with a line request, and
    # the next line gets a line request too; the recorded run replays the same way, the failure where it was
    refused = {"status": 404, "error": "no such endpoint: POST /v1/completions"}
    script = [refused, {"content": "1. `return lo if x > hi else x`"}, {"content": "1. `if x >= hi:`"}]
    script.append({"content": RIGHT_EDIT})  # the loop's fix
    transcript = tmp_path / "run.jsonl"
    monkeypatch.setenv("LSP_AGENT_INFILL_TEMPLATE", "qwen")
    monkeypatch.setenv("LSP_AGENT_REPAIR_LINES", "2")
    with ScriptedModelServer(script) as server:
        status = main(
            [
                "ask",
                TASK,
                "--repo",
                str(stats_project),
                "--model",
                "openai/scripted",
                "--api-base",
                server.base_url,
            ]
            + ["--api-key", "k", "--tool-calling", "prompt", "--profile", "small", "--max-iterations", "6"]
            + ["--allow-exec", "--transcript", str(transcript)]
        )
        requests = server.requests
    assert status == 0
    assert ["prompt" in r for r in requests] == [True, False, False, False]
    asked = [r["messages"][-1]["content"] for r in requests[1:3]]
    assert (
        f"Line {BUGGY_LINE} is likely wrong" in asked[0]
        and f"Line {BUGGY_LINE - 1} is likely wrong" in asked[1]
    )
    recording = load_recording(transcript)
    assert [a["type"] for a in recording.answers] == ["model_error", "reply", "reply", "reply"]
    assert recording.done["success"] and recording.start["infill_template"] == "qwen"
    monkeypatch.delenv("LSP_AGENT_INFILL_TEMPLATE")  # the replay takes the recorded settings
    assert main(["replay", str(transcript), "--allow-exec"]) == 0
