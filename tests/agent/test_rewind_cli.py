"""`lsp-agent rewind`: back to an earlier exchange restores the files applied since byte for byte, refuses a file
changed since (saying why), and the conversation goes on without the dropped exchanges (subprocesses, real CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_support import call, done

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
ORIGINAL = (
    "def add(a, b):\n    return a - b  # café\n\n\ndef mul(a, b):\n    return a * b"  # no final newline
)
STEPS = [
    {
        "content": "",
        "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
    },
    {
        "content": "",
        "tool_calls": [call("write_file", path="NOTES.md", content="add fixed\n")],
    },
    {**done("add adds")},
    {
        "content": "",
        "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a * b", new_text="b * a")],
    },
    {
        "content": "",
        "tool_calls": [call("write_file", path="docs/deep/x.md", content="x\n")],
    },
    {**done("mul swapped")},
    {**done("nothing to do")},
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args], capture_output=True, text=True, env=_env(), timeout=300
    )


def ask(workspace: Path, server: ScriptedModelServer, task: str, *extra: str) -> subprocess.CompletedProcess:
    model = ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"]
    proc = cli("ask", task, "--repo", str(workspace), *model, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_rewind_restores_files_byte_for_byte_refuses_a_drifted_one_and_drops_the_exchanges(
    workspace: Path,
) -> None:
    calc = workspace / "pkg" / "calc.py"
    calc.write_bytes(ORIGINAL.encode())
    repo = ["--repo", str(workspace)]
    with ScriptedModelServer(STEPS) as server:
        ask(workspace, server, "FIRST: fix add", "--apply")
        after_first = calc.read_bytes()
        ask(workspace, server, "SECOND: swap mul", "--continue", "--apply")
        assert (workspace / "docs" / "deep" / "x.md").exists() and calc.read_bytes() != after_first

        listed = cli("rewind", "--list", *repo)
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.splitlines()
        assert lines[0].startswith("  1. [complete] FIRST: fix add | applied NOTES.md, pkg/calc.py")
        assert lines[1].startswith("  2. [complete] SECOND: swap mul | applied docs/deep/x.md, pkg/calc.py")

        back = cli(
            "rewind", "1", *repo
        )  # undo the second exchange: its files and its place in the conversation
        assert back.returncode == 0, back.stdout + back.stderr
        assert calc.read_bytes() == after_first
        assert not (workspace / "docs").exists()  # the file and the folders the apply created are gone
        assert "rewound to exchange 1: 1 later exchange(s) dropped" in back.stdout.splitlines()[-1]

        (workspace / "NOTES.md").write_text("add fixed\nand my own note\n")  # changed since the apply
        again = cli("rewind", "0", *repo)
        assert again.returncode == 1
        assert "not restored: NOTES.md: changed since the apply" in again.stdout
        assert calc.read_bytes() == ORIGINAL.encode()  # the other file is restored, byte for byte
        assert (
            workspace / "NOTES.md"
        ).read_text() == "add fixed\nand my own note\n"  # left as the user made it
        assert "1 refused" in again.stdout.splitlines()[-1]

        assert "(rewound)" in cli("rewind", "--list", *repo).stdout
        ask(workspace, server, "THIRD: and now?", "--continue")
        prompt = str(server.requests[-1]["messages"])
    assert "THIRD" in prompt and "FIRST: fix add" not in prompt and "SECOND: swap mul" not in prompt
    assert "rewound the conversation to exchange 0" in prompt


def test_rewind_says_why_it_cannot(workspace: Path) -> None:
    nothing = cli("rewind", "--repo", str(workspace))
    assert nothing.returncode == 1 and "no conversation" in nothing.stdout
    with ScriptedModelServer([done("hello")]) as server:
        ask(workspace, server, "THIRD: hello")
    too_far = cli("rewind", "5", "--repo", str(workspace))
    assert (
        too_far.returncode == 1 and "no exchange 5: this conversation has exchanges 1 to 1" in too_far.stdout
    )
