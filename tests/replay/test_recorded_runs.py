"""Real-model runs replayed without a model: a change to prompts, parsing or tools that would change what the
recorded model saw or did shows up here as a divergence.

If a change alters the prompt on purpose, the replay diverges (that is the point: look at the diff it prints).
Then record the run again with the local model server running (see recorded_runs.py):

    python tests/replay/recorded_runs.py NAME --api-base http://127.0.0.1:8765/v1

and commit the new recordings/NAME.jsonl. A recording of a run that was stopped before its end (no "done" record:
fix_longest_word was stopped after two model steps of 6-9 minutes each on the shared, overloaded model server)
replays up to its last request. A divergence that a change makes on purpose without changing what the model is
sent (more tool calls after the recorded ones) is listed in the fixture's `expected_divergences` instead, and a
test of its own checks what the replay now does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from recorded_runs import RECORDINGS, RECORDINGS_DIR

from lsp_agent.replay.compare import Normalizer, compare
from lsp_agent.replay.recording import load_recording
from lsp_agent.replay.runner import _run_again, replay


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECORDINGS))
async def test_a_recorded_real_model_run_replays_without_divergence(name: str, tmp_path: Path) -> None:
    run = RECORDINGS[name]
    recording = load_recording(run.transcript(name))
    assert recording.start["model"] == "openai/local" and recording.start["mode"] == "prompt"
    assert recording.start["task"] == run.task and recording.replies, "an empty recording proves nothing"
    workspace = tmp_path / run.workspace  # same folder name: the system prompt names it
    shutil.copytree(RECORDINGS_DIR / run.workspace, workspace)
    report = await replay(run.transcript(name), workspace, allow_exec=run.allow_exec)
    assert [d.render() for d in report.divergences] == list(run.expected_divergences), report.render()
    assert report.requests == len(recording.requests)
    if not run.expected_divergences:
        assert report.tools == len(recording.tools)


@pytest.mark.slow
async def test_the_recorded_plausible_patch_now_ends_with_the_projects_line_and_says_another_passes(
    tmp_path: Path,
) -> None:
    # Qwen2.5-Coder 1.5B's fifth version `if word.islower() and len(word) > len(best):` passed the task's tests and
    # is wrong (longest_word("Hello hi") gives "hi"). The same replies now end with the smallest passing change.
    run = RECORDINGS["fix_longest_word_small"]
    recorded = load_recording(run.transcript("fix_longest_word_small"))
    workspace = tmp_path / run.workspace
    shutil.copytree(RECORDINGS_DIR / run.workspace, workspace)
    await _run_again(recorded, workspace, tmp_path / "replay.jsonl", run.allow_exec)
    replayed = load_recording(tmp_path / "replay.jsonl")
    divergences = compare(recorded, replayed, Normalizer(recorded.root, workspace))
    assert [d.render() for d in divergences] == list(run.expected_divergences)  # the model saw the same
    extra = replayed.tools[len(recorded.tools) :]
    assert [(t["arguments"]["new_text"].strip(), t["ok"]) for t in extra] == [
        ("if word.islower() and len(word) < len(best):", False),  # the added condition alone
        ("if len(word) > len(best):", True),  # the changed comparison alone: the project's line
    ]
    answer = replayed.done["answer"]
    assert answer.startswith(
        "wordstats/text.py line 18: `if len(word) < len(best):` is now `if len(word) > len(best):`. "
        "2 different versions of the line pass the tests, so the tests do not decide which is right: chosen "
        "`if len(word) > len(best):` (1 token changed, the smallest change); also passing: "
        "`if word.islower() and len(word) > len(best):` (7 tokens changed)."
    )
    assert (
        replayed.done["success"] and "Tests pass: `python -m pytest tests/test_text.py`: 2 passed." in answer
    )
