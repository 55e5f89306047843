"""`lsp-agent ask` prints the model's words as they come: the first words are on stdout before the reply has
finished streaming, and the action markup never is (a subprocess against a slowly streaming scripted model)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
THOUGHT = "First I look at calc.py to see how add is written."
READ = '<ACTION>{"name": "read_file", "arguments": {"path": "pkg/calc.py"}}</ACTION>'
FINISH = '<ACTION>{"name": "task_complete", "arguments": {"summary": "add subtracts"}}</ACTION>'


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, **extra}


def _ask(workspace: Path, server: ScriptedModelServer, env: dict[str, str]) -> subprocess.Popen:
    model = ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"]
    command = ["ask", "what does add do?", "--repo", str(workspace), "--tool-calling", "prompt", *model]
    return subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def test_ask_prints_the_first_words_before_the_reply_finishes(workspace: Path) -> None:
    reply = f"<THOUGHT>{THOUGHT}</THOUGHT>The answer follows.\n{READ}"
    steps = [{"content": reply, "chunk_delay": 0.15}, {"content": f"It subtracts.\n{FINISH}"}]
    with ScriptedModelServer(steps) as server:
        proc = _ask(workspace, server, _env())
        seen = bytearray()
        streams_when_first_words: list[list] = []

        def read() -> None:
            while chunk := os.read(proc.stdout.fileno(), 4096):
                seen.extend(chunk)
                if b"First I look" in seen and not streams_when_first_words:
                    streams_when_first_words.append(list(server.streams))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert proc.wait(timeout=90) == 0, proc.stderr.read().decode()
        reader.join(5)
    out = seen.decode()
    assert streams_when_first_words == [[]]  # the first words were out while the first reply still streamed
    assert THOUGHT in out and "The answer follows." in out and "It subtracts." in out
    assert "ACTION" not in out and '"read_file"' not in out and "<THOUGHT>" not in out
    assert out.count(THOUGHT) == 1  # not printed again as a `thought:` line when the step ends


def test_live_text_off_prints_each_step_whole(workspace: Path) -> None:
    with ScriptedModelServer([{"content": f"<THOUGHT>It subtracts.</THOUGHT>\n{FINISH}"}]) as server:
        proc = _ask(workspace, server, _env(LSP_AGENT_LIVE_TEXT_INTERVAL="0"))
        out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err.decode()
    assert "thought: It subtracts." in out.decode()
