"""Real-model runs replayed without a model: a change to prompts, parsing or tools that would change what the
recorded model saw or did shows up here as a divergence.

If a change alters the prompt on purpose, the replay diverges (that is the point: look at the diff it prints).
Then record the run again with the local model server running (see recorded_runs.py):

    python tests/replay/recorded_runs.py NAME --api-base http://127.0.0.1:8765/v1

and commit the new recordings/NAME.jsonl. A recording of a run that was stopped before its end (no "done" record:
fix_longest_word was stopped after two model steps of 6-9 minutes each on the shared, overloaded model server)
replays up to its last request.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from recorded_runs import RECORDINGS, RECORDINGS_DIR

from lsp_agent.replay.recording import load_recording
from lsp_agent.replay.runner import replay


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
    assert report.identical, report.render()
    assert report.requests == len(recording.requests) and report.tools == len(recording.tools)
