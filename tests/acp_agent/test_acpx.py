"""An independent ACP client from the npm registry (acpx) drives `lsp-agent acp` through a real run."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_support import agent_env

from lsp_agent.testing.scripted_model import ScriptedModelServer

HERE = Path(__file__).parent / "acpx"
NODE, NPM = shutil.which("node"), shutil.which("npm")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        NODE is None or NPM is None,
        reason="node and npm are needed to install and run acpx (the npm ACP client)",
    ),
]
SCRIPT = [
    {"content": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
    {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}
        ]
    },
    {"tool_calls": [{"name": "task_complete", "arguments": {"summary": "fixed add"}}]},
]


@pytest.fixture(scope="module")
def acpx() -> Path:
    """acpx installed from the registry by package-lock.json (npm install when missing or stale; `npm ci` refuses this lock: acpx's optional per-platform packages are not all on the registry)."""
    stamp = HERE / "node_modules" / ".lsp-agent-lock.sha256"
    digest = hashlib.sha256(
        b"".join((HERE / n).read_bytes() for n in ("package.json", "package-lock.json"))
    ).hexdigest()
    if not stamp.exists() or stamp.read_text(encoding="utf-8").strip() != digest:
        proc = subprocess.run(
            [NPM, "install", "--no-audit", "--no-fund", "--prefer-offline", "--progress=false"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"npm install failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        stamp.write_text(digest + "\n", encoding="utf-8")
    return HERE / "node_modules" / ".bin" / "acpx"


def run_acpx(
    acpx: Path, workspace: Path, home: Path, policy: str, exit_code: int = 0
) -> tuple[list[dict], ScriptedModelServer]:
    """One `acpx exec` turn against lsp-agent with the scripted model; the NDJSON protocol messages it logged."""
    with ScriptedModelServer(SCRIPT) as server:
        env = agent_env(server, home, HOME=str(home))
        command = [str(acpx), "--agent", f"{sys.executable} -m lsp_agent acp", "--cwd", str(workspace)]
        command += [policy, "--format", "json", "--timeout", "120", "exec", "fix add in calc.py"]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == exit_code, (
        f"acpx exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    messages = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return messages, server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def test_acpx_approves_an_edit_written_through_its_fs(acpx: Path, workspace: Path, tmp_path: Path) -> None:
    messages, _ = run_acpx(acpx, workspace, tmp_path, "--approve-all")
    methods = [m.get("method") for m in messages]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    (ask,) = [m for m in messages if m.get("method") == "session/request_permission"]
    (diff,) = ask["params"]["toolCall"]["content"]
    assert diff["type"] == "diff" and diff["newText"].endswith("a + b\n")
    assert methods.index("session/request_permission") < methods.index("fs/write_text_file")
    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    assert [u["kind"] for u in updates if u["sessionUpdate"] == "tool_call"] == ["read", "edit"]
    results = [m["result"] for m in messages if "result" in m and isinstance(m["result"], dict)]
    assert {"stopReason": "end_turn"}.items() <= results[-1].items()


def test_acpx_deny_all_leaves_the_file_untouched(acpx: Path, workspace: Path, tmp_path: Path) -> None:
    messages, server = run_acpx(acpx, workspace, tmp_path, "--deny-all", exit_code=5)  # its PERMISSION_DENIED
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert "fs/write_text_file" not in [m.get("method") for m in messages]
    assert "the user rejected it" in server.requests[-1]["messages"][-1]["content"]
