"""The real-model runs kept as replay fixtures, and how to record them again.

Each recording is a transcript of `lsp-agent ask` with Qwen2.5-Coder 1.5B (Q4_K_M, llama.cpp's OpenAI-compatible
server) in prompt tool-calling mode, on a workspace kept next to it under recordings/. Record one again (after a
change to prompts or parsing made its replay diverge on purpose) with the model server running:

    python tests/replay/recorded_runs.py NAME [--api-base http://127.0.0.1:8765/v1] [--model openai/local]

It copies the workspace to a scratch folder of the same name (the system prompt names the folder), runs the task
there (nothing is applied) and replaces recordings/NAME.jsonl.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RECORDINGS_DIR = Path(__file__).resolve().parent / "recordings"


@dataclass(frozen=True)
class RecordedRun:
    """One fixture: the workspace folder under recordings/, the task, and the flags it was recorded with."""

    workspace: str
    task: str
    max_iterations: int
    profile: str = "auto"  # lsp-agent's --profile (auto resolves to full for "openai/local")
    allow_exec: bool = False  # recorded (and replayed) with the exec permission granted
    infill: str = ""  # the infillTemplate recorded with (the replay takes it from the recording)
    # divergences a later change made on purpose, each said in full; the recorded replies stay the model's own
    expected_divergences: tuple[str, ...] = ()

    def transcript(self, name: str) -> Path:
        """Where the recording lives."""
        return RECORDINGS_DIR / f"{name}.jsonl"


RECORDINGS = {
    "fix_longest_word": RecordedRun(
        "wordstats",
        "The tests in tests/test_text.py fail since the last change to wordstats/text.py; fix it.",
        5,
    ),
    "fix_longest_word_small": RecordedRun(
        "wordstats",
        "The tests in tests/test_text.py fail since the last change to wordstats/text.py; fix it.",
        5,
        profile="small",
        allow_exec=True,
        # the run ended with the plausible `if word.islower() and len(word) > len(best):`; line repairs now also
        # test the two simpler versions between it and the line (test_recorded_runs.py checks what they find)
        expected_divergences=("tool calls: the replay made 13 where the recording made 11",),
    ),
    "fix_longest_word_infill": RecordedRun(
        "wordstats",
        "The tests in tests/test_text.py fail since the last change to wordstats/text.py; fix it.",
        5,
        profile="small",
        allow_exec=True,
        infill="qwen",
    ),
    "explain_word_count": RecordedRun(
        "wordstats",
        "What does word_count in wordstats/text.py return for an empty string? Answer in one sentence.",
        3,
    ),
}


def record(name: str, model: str, api_base: str) -> int:
    """Run the recording's task against a real model and keep its transcript; returns ask's exit status."""
    run = RECORDINGS[name]
    target = run.transcript(name)
    with tempfile.TemporaryDirectory(prefix="lsp-agent-record-") as scratch:
        workspace = Path(scratch) / run.workspace
        shutil.copytree(RECORDINGS_DIR / run.workspace, workspace)
        transcript = Path(scratch) / "transcript.jsonl"
        command = [sys.executable, "-m", "lsp_agent", "ask", run.task, "--repo", str(workspace)]
        command += ["--model", model, "--api-base", api_base, "--tool-calling", "prompt"]
        command += ["--max-iterations", str(run.max_iterations), "--request-timeout", "900"]
        command += ["--transcript", str(transcript), "--profile", run.profile]
        command += ["--allow-exec"] if run.allow_exec else []
        # Not streamed: llama-cpp-python's server (interrupt_requests, on by default) ends a streamed reply early
        # whenever another client's request is waiting, and the shared model server has other clients.
        env = {**os.environ, "LSP_AGENT_STREAM": "false", "LSP_AGENT_INFILL_TEMPLATE": run.infill}
        status = subprocess.call(command, stdin=subprocess.DEVNULL, env=env)
        shutil.copyfile(transcript, target)
    print(f"recorded {target} (ask exited {status})")
    return status


def main() -> int:
    """Command line: record one fixture again."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("name", choices=sorted(RECORDINGS))
    parser.add_argument("--model", default="openai/local")
    parser.add_argument("--api-base", default="http://127.0.0.1:8765/v1")
    args = parser.parse_args()
    return record(args.name, args.model, args.api_base)


if __name__ == "__main__":
    raise SystemExit(main())
