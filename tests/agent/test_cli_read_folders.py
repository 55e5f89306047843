"""`lsp-agent ask --read-folder PATH`: the run reads another folder as @name/..., writes only in --repo."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from agent_support import call, done

from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.workspace.proposal import current_umask

REPO = Path(__file__).resolve().parents[2]
CLIENT = "def fetch(url):\n    return url\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=90,
    )


def test_ask_reads_another_folder_and_keeps_its_writes_in_the_repo(tmp_path: Path):
    app, api = tmp_path / "app", tmp_path / "api"
    (app / "src").mkdir(parents=True)
    (app / "src" / "main.py").write_text("print('app')\n")
    (api / "pkg").mkdir(parents=True)
    (api / "pkg" / "client.py").write_text(CLIENT)
    script = [
        {"content": "", "tool_calls": [call("read_file", path="@api/pkg/client.py")]},
        {"content": "", "tool_calls": [call("write_file", path="@api/pkg/extra.py", content="X = 1\n")]},
        {
            "content": "",
            "tool_calls": [call("write_file", path="src/use.py", content="from client import fetch\n")],
        },
        done("wrote src/use.py"),
    ]
    with ScriptedModelServer(script) as server:
        model = ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"]
        proc = cli(
            "ask",
            "use @api/pkg/client.py",
            "--repo",
            "app",
            "--read-folder",
            "api",
            "--apply",
            *model,
            cwd=tmp_path,
        )
        assert server.requests, proc.stdout + proc.stderr
        observations = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
        first = server.requests[0]["messages"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reading across folders: @api (read-only); edits stay in @app" in proc.stdout
    assert "context: attached @api/pkg/client.py (2 lines)" in proc.stdout
    assert any("Also open for reading, read-only: @api" in str(m["content"]) for m in first)
    assert "1: def fetch(url):" in observations[0]
    assert (
        "@api/pkg/extra.py: is in the workspace folder @api, which this run may only read" in observations[1]
    )
    assert (app / "src" / "use.py").read_text() == "from client import fetch\n"  # applied in --repo
    created_mode = stat.S_IMODE((app / "src" / "use.py").stat().st_mode)
    assert created_mode == 0o666 & ~current_umask()  # ask --apply: the mode a user's new file gets
    assert not (api / "pkg" / "extra.py").exists() and (api / "pkg" / "client.py").read_text() == CLIENT


def test_a_read_folder_that_is_no_directory_is_refused_before_the_run(tmp_path: Path):
    (tmp_path / "app").mkdir()
    proc = cli(
        "ask", "anything", "--repo", "app", "--read-folder", "missing", "--model", "openai/x", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "error: --read-folder missing: not a directory; give the path of a folder to read" in proc.stderr
