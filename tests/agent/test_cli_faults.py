"""`lsp-agent ask` facing a broken model: one line per error, no traceback, a non-zero exit, odd text printed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]


def _ask(root: Path, server: ScriptedModelServer, *flags: str) -> subprocess.CompletedProcess:
    """`ask` in a subprocess with no API key anywhere in its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LSP_AGENT_", "OPENAI_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["ask", "do it", "--repo", str(root), "--model", "openai/scripted", "--api-base", server.base_url]
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args, "--no-color", *flags],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_ask_prints_lone_surrogates_without_a_key_and_without_crashing(workspace):
    script = [
        {
            "content": "thinking \ud800",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "x\ud800.py"}}],
        },
        {"content": "the answer \ud800"},
    ]
    with ScriptedModelServer(script) as server:
        proc = _ask(workspace, server)
    assert proc.returncode == 0, proc.stderr
    assert "thought: thinking \ufffd" in proc.stdout and "the answer \ufffd" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_ask_request_timeout_bounds_a_stalled_reply_and_prints_the_final_error_once(workspace):
    with ScriptedModelServer([{"endless": True}, {"endless": True}]) as server:
        started = time.monotonic()
        proc = _ask(workspace, server, "--request-timeout", "3")
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 3
        while not server.disconnects and time.monotonic() < deadline:
            time.sleep(0.05)  # the server notices at its next write
    out = proc.stdout
    assert proc.returncode == 1
    final = "did not finish its reply within 3 s (raise requestTimeout / --request-timeout for a slow model)"
    assert f"{final}; retry 1 in" in out  # the retry notice
    assert out.count(f"{final} (gave up after 2 attempts)") == 1 and out.count("\nerror: ") == 1
    assert "Traceback" not in out + proc.stderr and proc.stderr.strip() == ""
    assert server.disconnects >= 1 and elapsed < 60
