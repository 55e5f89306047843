"""Several versions of a line that pass, through the real run, litellm, coverage and the sandbox (scripted model,
prompt mode): every version of the reply is tested, the smallest change is chosen, and the summary and the events
say which others pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_sandbox_fault_lines
from sandbox_helpers import asker, run_scripted
from test_sandbox_fault_lines import BUGGY_LINE, STATS, TASK

from lsp_agent.cli.main import main
from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins", "litellm_imported")]
stats_project = test_sandbox_fault_lines.stats_project  # the fixture: clamp() with a one-line bug
SMALL = {"tool_calling": "prompt", "profile": "small", "max_iterations": 6}
FIXED = STATS.replace("        return lo\n    return x", "        return hi\n    return x")


async def test_all_passing_versions_of_a_reply_are_found_and_the_smallest_change_is_proposed(
    stats_project: Path,
) -> None:
    reply = "1. `return min(x, hi)`\n2. `return lo - 1`\n3. `return hi`"
    out = await run_scripted(
        stats_project, [{"content": reply}], TASK, permission=asker("allow_once"), **SMALL
    )
    assert len(out.requests) == 1  # the versions of the one reply, no more requests
    edits = [r for r in out.of("tool_result") if r["id"].startswith("line-repair-")]
    assert [e["ok"] for e in edits] == [True, False, True]  # tested on after the first passed
    result = out.result
    assert result.success and result.proposal.changes[0].new_text == FIXED
    assert result.answer.startswith(
        f"pkg/stats.py line {BUGGY_LINE}: `return lo` is now `return hi`. 2 different versions of the line pass "
        "the tests, so the tests do not decide which is right: chosen `return hi` (1 token changed, the smallest "
        "change); also passing: `return min(x, hi)` (6 tokens changed). Check the change before you keep it."
    )
    assert "Tests pass: `python -m pytest tests/test_stats.py`: 6 passed." in result.answer
    [alternatives] = [e for e in out.of("context") if e.get("what") == "alternatives"]
    assert alternatives["versions"] == ["        return hi", "        return min(x, hi)"]
    assert alternatives["path"] == "pkg/stats.py" and alternatives["status"] in result.answer


async def test_one_passing_version_says_nothing_of_alternatives(stats_project: Path) -> None:
    out = await run_scripted(
        stats_project, [{"content": "1. `return hi`"}], TASK, permission=asker("allow_once"), **SMALL
    )
    assert out.result.success and "different versions" not in out.result.answer
    assert not [e for e in out.of("context") if e.get("what") == "alternatives"]


def test_ask_prints_that_two_versions_pass_and_applies_the_smallest_change(
    stats_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = "1. `return min(x, hi)`\n2. `return hi`"
    with ScriptedModelServer([{"content": reply}]) as server:
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
            + ["--allow-exec", "--apply"]
        )
    printed = capsys.readouterr()
    assert status == 0
    assert "2 different versions of the line pass the tests" in printed.out + printed.err
    assert "also passing: `return min(x, hi)` (6 tokens changed)" in printed.out + printed.err
    assert (stats_project / "pkg" / "stats.py").read_text() == FIXED


async def test_the_loops_passing_one_line_edit_gives_way_to_a_simpler_passing_version(project: Path) -> None:
    calc_task = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."
    edit = "<THOUGHT>add</THOUGHT>\npkg/calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b + 0\n>>>>>>> REPLACE"
    out = await run_scripted(
        project,
        [{"content": edit}],
        calc_task,
        permission=asker("allow_once"),
        profile="small",
        tool_calling="prompt",
        repair_lines=0,
    )
    edits = [r for r in out.of("tool_result") if r["name"] == "edit_file"]
    assert len(edits) == 1 and edits[0]["ok"]  # the simpler versions are tested inside the model's edit
    assert edits[0]["output"].endswith(
        "A simpler version of pkg/calc.py line 2 passes too: `return a + b` is proposed instead. 2 different "
        "versions of the line pass the tests, so the tests do not decide which is right: chosen `return a + b` "
        "(1 token changed, the smallest change); also passing: `return a + b + 0` (3 tokens changed). Check the "
        "change before you keep it."
    )
    result = out.result
    assert result.success and result.proposal.changes[0].new_text == "def add(a, b):\n    return a + b\n"
    assert result.answer.startswith("add\n\nA simpler version of pkg/calc.py line 2 passes too")
    [alternatives] = [e for e in out.of("context") if e.get("what") == "alternatives"]
    assert alternatives["versions"] == ["    return a + b", "    return a + b + 0"]
    assert alternatives["path"] == "pkg/calc.py" and alternatives["line"] == 2
    assert result.answer.endswith("Tests pass: `python -m pytest tests/test_calc.py`: 1 passed.")
