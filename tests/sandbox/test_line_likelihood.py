"""The code model's likelihood breaks ties among passing versions of a line, through the real run, litellm's text
completions, coverage and the sandbox (scripted model scoring echoed prompts): the likelier of two equally small
versions is proposed, a server without prompt log-probabilities or with malformed ones keeps the order found."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted

from lsp_agent.cli.main import main
from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins", "litellm_imported")]
CLAMP = """def clamp(x, lo, hi):
    low = min(lo, hi)
    high = max(lo, hi)
    span = high - low
    if span == 0:
        return low
    if x < low:
        return low
    if x > high:
        return low
    return x
"""
BUGGY_LINE = 10  # `return low` where clamp() should return high
TESTS = """from pkg.clamp import clamp


def test_low():
    assert clamp(-5, 0, 10) == 0


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_high():
    assert clamp(50, 0, 10) == 10


def test_far_high():
    assert clamp(5000, 0, 10) == 10
"""
TASK = "The tests in tests/test_clamp.py fail since the last change to pkg/clamp.py; fix it."
HEAD, TAIL = CLAMP.split("        return low\n    return x")
FIXED = f"{HEAD}        return high\n    return x{TAIL}"
CONSTANT = f"{HEAD}        return 10\n    return x{TAIL}"  # passes the tests too, and is wrong
# the infill requests bring nothing; the line request about the buggy line brings two one-token versions that pass
SCRIPT = [{"content": "\n"}] * 20 + [
    {"match": f"corrected versions of line {BUGGY_LINE},", "content": "1. `return 10`\n2. `return high`"}
]
SETTINGS = {"tool_calling": "prompt", "profile": "small", "max_iterations": 30, "repair_lines": 20}
PREFERS_HIGH = {"        return high": -0.2, "        return 10": -2.5}  # each version as it is put in
QWEN = {**SETTINGS, "infill_template": "qwen"}


@pytest.fixture
def clamp_project(tmp_path: Path) -> Path:
    """A package with a one-line bug in clamp() that a constant fixes as well as the right name does."""
    root = tmp_path / "clamp"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "clamp.py").write_text(CLAMP)
    (root / "tests" / "test_clamp.py").write_text(TESTS)
    return root


async def test_of_two_equally_small_passing_versions_the_one_the_model_scores_higher_is_proposed(
    clamp_project: Path,
) -> None:
    out = await run_scripted(
        clamp_project, SCRIPT, TASK, permission=asker("allow_once"), prompt_scores=PREFERS_HIGH, **QWEN
    )
    result = out.result
    assert result.success and result.proposal.changes[0].new_text == FIXED
    assert result.answer.startswith(
        f"pkg/clamp.py line {BUGGY_LINE}: `return low` is now `return high`. 2 different versions of the line "
        "pass the tests, so the tests do not decide which is right: chosen `return high` (1 token changed, mean "
        "log-probability -0.20, the smallest change, and the one the model finds likeliest of those as small); "
        "also passing: `return 10` (1 token changed, mean log-probability -2.50). The model prefers "
        "`return high` (per token, in the line's place; higher is likelier). Check the change before you keep it."
    )
    # each version scored once, in the infill prompt's middle, echoed, one token generated
    lines = CLAMP.splitlines()
    prompt = (
        "<|fim_prefix|>"
        + "".join(f"{line}\n" for line in lines[: BUGGY_LINE - 1])
        + "<|fim_suffix|>"
        + "".join(f"\n{line}" for line in lines[BUGGY_LINE:])
        + "\n<|fim_middle|>"
    )
    assert sorted(r["prompt"] for r in out.scored) == [
        prompt + "        return 10",
        prompt + "        return high",
    ]
    assert all(r["echo"] is True and r["logprobs"] == 5 and r["max_tokens"] == 1 for r in out.scored)
    [alternatives] = [e for e in out.of("context") if e.get("what") == "alternatives"]
    assert alternatives["versions"] == ["        return high", "        return 10"]
    assert alternatives["likelihood"] == [-0.2, -2.5]
    assert all(
        "echo" not in r for r in out.requests
    )  # scoring is no request of the run's (no step, no record)


async def test_versions_of_different_sizes_are_not_scored(clamp_project: Path) -> None:
    # the smallest change is chosen whatever the scores; each score is a request costing minutes on a CPU server
    script = [{"content": "\n"}] * 20 + [
        {
            "match": f"corrected versions of line {BUGGY_LINE},",
            "content": "1. `return max(lo, hi)`\n2. `return high`",
        }
    ]
    prefers_max = {"        return max(lo, hi)": -0.1, "        return high": -3.0}
    out = await run_scripted(
        clamp_project, script, TASK, permission=asker("allow_once"), prompt_scores=prefers_max, **QWEN
    )
    result = out.result
    assert result.success and result.proposal.changes[0].new_text == FIXED
    assert not out.scored
    assert (
        "chosen `return high` (1 token changed, the smallest change); also passing: `return max(lo, hi)`"
        in (result.answer)
    )
    assert "log-probability" not in result.answer and "prefers" not in result.answer
    [alternatives] = [e for e in out.of("context") if e.get("what") == "alternatives"]
    assert alternatives["versions"] == ["        return high", "        return max(lo, hi)"]
    assert "likelihood" not in alternatives


@pytest.mark.parametrize(
    "scores",
    [
        None,  # logprobs null: a server that scores no prompt tokens
        lambda prompt: {
            "tokens": ["\n"],
            "token_logprobs": [-0.1],
            "top_logprobs": [{"\n": -0.1}],
        },  # generated
        lambda prompt: {"tokens": "oops", "token_logprobs": {"a": 1}},
        lambda prompt: {"tokens": ["a", "b"], "token_logprobs": [None, "x"]},
        lambda prompt: [1, 2, 3],
    ],
    ids=["no-logprobs", "generated-only", "wrong-types", "not-numbers", "a-list"],
)
async def test_without_usable_prompt_logprobs_the_order_found_is_kept(
    clamp_project: Path, scores: object
) -> None:
    out = await run_scripted(
        clamp_project, SCRIPT, TASK, permission=asker("allow_once"), prompt_scores=scores, **QWEN
    )
    result = out.result
    assert result.success and result.proposal.changes[0].new_text == CONSTANT  # the first found, as before
    assert (
        "chosen `return 10` (1 token changed, the smallest change); also passing: `return high` (1 token "
        in (result.answer)
    )
    assert "log-probability" not in result.answer and "prefers" not in result.answer
    assert len(out.scored) == 1  # the first answer without scores ends the scoring
    [alternatives] = [e for e in out.of("context") if e.get("what") == "alternatives"]
    assert "likelihood" not in alternatives


async def test_a_chat_only_model_is_never_asked_to_score(clamp_project: Path) -> None:
    reply = "1. `return 10`\n2. `return high`"
    out = await run_scripted(
        clamp_project,
        [{"content": reply}],
        TASK,
        permission=asker("allow_once"),
        prompt_scores=PREFERS_HIGH,
        **SETTINGS,
        infill_template="",  # no text completions: no infill, no scoring
    )
    assert out.result.proposal.changes[0].new_text == CONSTANT and not out.scored


def test_ask_with_the_small_profile_applies_the_version_the_model_prefers(
    clamp_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `auto` (the default infillTemplate) picks the qwen template by the model's name
    model = ["--model", "openai/qwen2.5-coder-1.5b-instruct", "--api-key", "k", "--tool-calling", "prompt"]
    with ScriptedModelServer(SCRIPT, prompt_scores=PREFERS_HIGH) as server:
        status = main(
            ["ask", TASK, "--repo", str(clamp_project), *model, "--api-base", server.base_url]
            + ["--profile", "small", "--max-iterations", "30", "--allow-exec", "--apply"]
        )
        scored = len(server.scored)
    printed = capsys.readouterr()
    assert status == 0 and scored == 2
    assert "The model prefers `return high`" in printed.out + printed.err
    assert (clamp_project / "pkg" / "clamp.py").read_text() == FIXED
