"""`lsp-agent apply` / `lsp-agent undo` and a cancelled `ask`, through the console entry in subprocesses."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agent_support import call, done

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = ORIGINAL.replace("a - b", "a + b")
FIX_AND_NOTE = [
    {
        "content": "",
        "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
    },
    {"content": "", "tool_calls": [call("write_file", path="NOTES.md", content="add fixed\n")]},
    done("add now adds"),
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli(*args: str) -> subprocess.CompletedProcess:
    """`lsp-agent ARGS` in a subprocess (the tests' XDG_STATE_HOME keeps the records private)."""
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args], capture_output=True, text=True, env=_env(), timeout=90
    )


def ask(workspace: Path, server: ScriptedModelServer, *extra: str) -> subprocess.CompletedProcess:
    model = ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"]
    return cli("ask", "fix add", "--repo", str(workspace), *model, *extra)


def last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout.strip().splitlines()[-1]


def test_apply_writes_the_proposal_ask_showed_and_undo_restores_the_exact_text(workspace):
    """One ask serves both: apply first refuses a file changed since the ask (writing nothing), then, the file as
    the agent read it again, writes the proposal."""
    calc = workspace / "pkg" / "calc.py"
    with ScriptedModelServer(FIX_AND_NOTE) as server:
        shown = ask(workspace, server)
        requests = len(server.requests)
        assert shown.returncode == 0, shown.stderr
        assert calc.read_text() == ORIGINAL and not (workspace / "NOTES.md").exists()

        calc.write_text(ORIGINAL + "# mine\n")
        refused = cli("apply", "--repo", str(workspace))
        assert refused.returncode == 1
        assert "pkg/calc.py: changed on disk since the agent read it" in refused.stdout
        assert last_line(refused).startswith("not applied:")
        assert calc.read_text() == ORIGINAL + "# mine\n" and not (workspace / "NOTES.md").exists()

        calc.write_text(ORIGINAL)
        applied = cli("apply", "--repo", str(workspace))
        assert len(server.requests) == requests  # the model was not asked again
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "2 files changed (1 created)" in applied.stdout
    assert last_line(applied).startswith("applied 2 file(s)")
    assert calc.read_text() == FIXED and (workspace / "NOTES.md").read_text() == "add fixed\n"

    again = cli("apply", "--repo", str(workspace))
    assert again.returncode == 1 and "applied already" in last_line(again)

    undone = cli("undo", "--repo", str(workspace))
    assert undone.returncode == 0, undone.stdout
    assert last_line(undone).startswith("undone: 2 file(s) restored")
    assert calc.read_bytes() == ORIGINAL.encode() and not (workspace / "NOTES.md").exists()

    twice = cli("undo", "--repo", str(workspace))
    assert twice.returncode == 1 and "nothing applied" in last_line(twice)
    reapplied = cli("apply", "--repo", str(workspace))  # undo makes the proposal applicable again
    assert reapplied.returncode == 0 and calc.read_text() == FIXED


def test_apply_without_a_last_proposal_says_how_to_get_one(workspace):
    proc = cli("apply", "--repo", str(workspace))
    assert proc.returncode == 1
    assert "no proposal to apply" in last_line(proc) and "lsp-agent ask" in last_line(proc)
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL


def test_undo_refuses_a_file_changed_since_the_apply_and_changes_nothing(workspace):
    with ScriptedModelServer(FIX_AND_NOTE) as server:
        proc = ask(workspace, server, "--apply")
    assert proc.returncode == 0, proc.stdout
    assert "| applied 2 file(s)" in last_line(proc)
    calc = workspace / "pkg" / "calc.py"
    calc.write_text(FIXED + "# mine\n")
    undone = cli("undo", "--repo", str(workspace))
    assert undone.returncode == 1
    assert "pkg/calc.py: changed since the apply" in undone.stdout
    assert last_line(undone).startswith("not undone:")
    assert calc.read_text() == FIXED + "# mine\n"
    assert (workspace / "NOTES.md").read_text() == "add fixed\n"  # all or nothing: the note stays too


def test_a_refused_ask_apply_says_so_in_its_summary_line_and_exits_1(workspace):
    calc = workspace / "pkg" / "calc.py"
    slow_fix = [dict(FIX_AND_NOTE[0]), {**done("add now adds"), "delay": 1.5}]
    with ScriptedModelServer(slow_fix) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "ask", "fix add", "--repo", str(workspace), "--apply"]
            + ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        calc.write_text(ORIGINAL + "# edited during the run\n")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("success (complete)") and "| not applied:" in summary
    assert calc.read_text() == ORIGINAL + "# edited during the run\n"


@pytest.mark.slow
def test_a_cancelled_ask_exits_130_without_printing_its_last_thought_as_the_answer(workspace):
    script = [
        {"content": "Thinking about add.", "tool_calls": [call("read_file", path="pkg/calc.py")]},
        {**done("never reached"), "delay": 30},
    ]
    with ScriptedModelServer(script) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "ask", "fix add", "--repo", str(workspace)]
            + ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    assert "thought: Thinking about add." in out  # shown while it ran, as a thought
    assert "Answer:" not in out
    assert out.strip().splitlines()[-1].startswith("failed (cancelled)")


MODES_AND_DIRS = [
    {
        "content": "",
        "tool_calls": [call("edit_file", path="run.sh", old_text="echo a", new_text="echo b")],
    },
    {"content": "", "tool_calls": [call("write_file", path="tools/gen/make.py", content="M = 1\n")]},
    done("script changed, generator added"),
]


def test_apply_gives_new_files_the_users_mode_keeps_modes_and_undo_removes_created_dirs(workspace):
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho a\n")
    script.chmod(0o755)
    created = workspace / "tools" / "gen" / "make.py"
    with ScriptedModelServer(MODES_AND_DIRS) as server:
        shown = ask(workspace, server)
    assert shown.returncode == 0, shown.stderr
    old_umask = os.umask(0o022)  # the subprocess inherits it: its new files get 0644
    try:
        applied = cli("apply", "--repo", str(workspace))
    finally:
        os.umask(old_umask)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert created.read_text() == "M = 1\n" and stat.S_IMODE(created.stat().st_mode) == 0o644
    assert script.read_text().endswith("echo b\n") and stat.S_IMODE(script.stat().st_mode) == 0o755

    undone = cli("undo", "--repo", str(workspace))
    assert undone.returncode == 0, undone.stdout
    assert "removed tools/ (created by the apply, empty now)" in undone.stdout
    assert not (workspace / "tools").exists()  # the directories the apply made, not only the file
    assert (workspace / "pkg").is_dir() and stat.S_IMODE(script.stat().st_mode) == 0o755
