"""`lsp-agent ask` end to end in a subprocess against the scripted server."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from agent_support import call, done

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIX = [
    {"content": "Read the module.", "tool_calls": [call("read_file", path="pkg/calc.py")]},
    {
        "content": "Fix it.",
        "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
    },
    done("add now adds"),
]


@pytest.fixture(autouse=True)
def _restore_logging():
    """In-process CLI runs install a log handler; take it away again."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if h.get_name() == "lsp-agent-cli"]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def _ask(args: list[str], env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "ask", *args], capture_output=True, text=True, env=env, timeout=90
    )


@pytest.mark.slow
def test_ask_prints_the_run_and_leaves_the_workspace_untouched(workspace, tmp_path):
    transcript = tmp_path / "run.jsonl"
    with ScriptedModelServer(FIX) as server:
        proc = _ask(
            [
                "fix add",
                "--repo",
                str(workspace),
                "--model",
                "openai/scripted",
                "--api-base",
                server.base_url,
                "--api-key",
                "test",
                "--transcript",
                str(transcript),
                "--session",
                "cli-s1",
            ]
        )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "thought: Read the module." in out and '-> read_file(path="pkg/calc.py")' in out
    assert "<- edit_file ok" in out and "Answer:\nadd now adds" in out
    assert "-    return a - b\n+    return a + b" in out and "not applied" in out
    assert "success (complete) | iterations 3" in out and "cost $0.0000" in out
    assert "\033[" not in out  # no colour when not on a terminal
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL
    types = [json.loads(line)["type"] for line in transcript.read_text().splitlines()]
    assert types[0] == "start" and types[-1] == "done" and types.count("tool") == 3
    session_file = Path(os.environ["XDG_CACHE_HOME"]) / "lsp-agent" / "sessions" / "cli-s1.json"
    (exchange,) = json.loads(session_file.read_text())["exchanges"]
    assert exchange["task"] == "fix add" and exchange["answer"] == "add now adds"
    assert exchange["proposed"] == ["pkg/calc.py"] and "not applied" in exchange["notes"][0]


def test_ask_apply_in_prompt_mode_with_env_and_dotenv_settings(workspace, monkeypatch, capsys):
    from lsp_agent.cli.main import main

    script = [
        {
            "content": '<THOUGHT>Fix it.</THOUGHT><ACTION>{"name": "edit_file", "arguments": {"path": "pkg/calc.py", '
            '"old_text": "a - b", "new_text": "a + b"}}</ACTION>'
        },
        {
            "content": '<THOUGHT>Done.</THOUGHT><ACTION>{"name": "task_complete", "arguments": {"summary": "fixed"}}'
            "</ACTION>"
        },
    ]
    monkeypatch.setenv("LSP_AGENT_MODEL", "openai/scripted")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.toml"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(
        f'trustedWorkspaces = ["{workspace}"]\n'
    )  # a workspace .env names a server only then
    with ScriptedModelServer(script) as server:
        (workspace / ".env").write_text(f"LSP_AGENT_API_BASE={server.base_url}\nOPENAI_API_KEY=test\n")
        status = main(["ask", "fix add", "--repo", str(workspace), "--tool-calling", "prompt", "--apply"])
        requests = server.requests
    out = capsys.readouterr().out
    assert status == 0, out
    assert "applied 1 file(s)" in out and "success (complete) | iterations 2" in out
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL.replace("a - b", "a + b")
    assert "tools" not in requests[0] and "Available Tools:" in requests[0]["messages"][0]["content"]


def test_ask_without_a_model_says_how_to_configure_one(workspace):
    proc = _ask(["fix add", "--repo", str(workspace)], {"OPENAI_API_KEY": ""})
    assert proc.returncode != 0
    assert "--model" in proc.stderr and "LSP_AGENT_MODEL" in proc.stderr and ".env" in proc.stderr


def test_apply_is_refused_when_the_run_did_not_complete(workspace, capsys, tmp_path):
    from lsp_agent.cli.main import main

    script = [
        {
            "content": "",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
        }
    ]
    with ScriptedModelServer(script) as server:
        status = main(
            [
                "ask",
                "fix add",
                "--repo",
                str(workspace),
                "--model",
                "openai/scripted",
                "--api-base",
                server.base_url,
                "--api-key",
                "test",
                "--max-iterations",
                "1",
                "--apply",
                "--log-level",
                "INFO",
                "--log-file",
                str(tmp_path / "agent.log"),
            ]
        )
    out = capsys.readouterr().out
    assert status == 1 and "not applied: the run did not complete (max_iterations)" in out
    assert "failed (max_iterations) | iterations 1" in out
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL
    log = (tmp_path / "agent.log").read_text()
    assert "iteration 1 of 1" in log and "reached the iteration limit of 1" in log and "tool edit_file" in log
    assert "openai/scripted, native tool calling" in log and "iteration limit 1" in log


def test_apply_refuses_a_file_changed_on_disk_during_the_run(workspace, capsys):
    from lsp_agent.cli.main import main

    script = [FIX[1], {**done("fixed"), "delay": 0.5}]
    target = workspace / "pkg" / "calc.py"
    with ScriptedModelServer(script) as server:

        def user_edits_the_file() -> None:
            while len(server.requests) < 2:
                time.sleep(0.01)
            target.write_text(ORIGINAL + "# the user's own edit\n")

        editor = threading.Thread(target=user_edits_the_file)
        editor.start()
        status = main(
            [
                "ask",
                "fix add",
                "--repo",
                str(workspace),
                "--model",
                "openai/scripted",
                "--api-base",
                server.base_url,
                "--api-key",
                "test",
                "--apply",
            ]
        )
        editor.join()
    out = capsys.readouterr().out
    assert status == 1 and "not applied: pkg/calc.py" in out
    assert target.read_text() == ORIGINAL + "# the user's own edit\n"


def test_ask_warns_about_python_syntax_errors_left_in_the_proposal(workspace, capsys):
    from lsp_agent.cli.main import main

    broken = {"content": "", "tool_calls": [call("write_file", path="pkg/new.py", content="def f(:\n")]}
    with ScriptedModelServer([broken, done("first try"), done("finished anyway")]) as server:
        status = main(
            ["ask", "add f", "--repo", str(workspace), "--model", "openai/scripted"]
            + ["--api-base", server.base_url, "--api-key", "test"]
        )
        requests = server.requests
    out = capsys.readouterr().out
    assert status == 3 and "Answer:\nfinished anyway" in out  # finished, but its own checks fail
    assert "syntax errors" in requests[2]["messages"][-1]["content"]  # told once before it could finish
    assert "warning: the proposal fails its own checks: syntax error: pkg/new.py:1:" in out
    assert out.rstrip().splitlines()[-1].startswith("checks failed (complete) | iterations 3")


def test_ask_on_a_terminal_prints_in_colour(workspace, monkeypatch):
    import pty

    from lsp_agent.cli.main import main

    master, slave = pty.openpty()
    terminal = os.fdopen(slave, "w", encoding="utf-8")  # a real terminal as stdout
    chunks: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the terminal is closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", terminal)
    with ScriptedModelServer(FIX) as server:
        status = main(
            ["ask", "fix add", "--repo", str(workspace), "--model", "openai/scripted"]
            + ["--api-base", server.base_url, "--api-key", "test"]
        )
    terminal.close()
    reader.join(10)
    os.close(master)
    out = b"".join(chunks).decode().replace("\r\n", "\n")
    assert status == 0
    assert "\033[36mthought: Read the module.\033[0m" in out  # thoughts in cyan
    assert "\033[32m+    return a + b\033[0m" in out and "\033[31m-    return a - b\033[0m" in out
