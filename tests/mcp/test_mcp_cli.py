"""`lsp-agent ask` with MCP servers from the workspace config file and --mcp-server flags (in process)."""

from __future__ import annotations

import io
import json
import logging
import re
import sys
from pathlib import Path

import pytest
from mcp_helpers import BROKEN, NOTES

from lsp_agent.mcp.manager import _LIVE
from lsp_agent.testing.scripted_model import ScriptedModelServer


def step(name: str, **arguments) -> dict:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def ask(tmp_path, monkeypatch, capsys):
    """Run `lsp-agent ask` in this process with no terminal; returns (status, stdout, stderr, model requests)."""
    from lsp_agent.cli.main import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level

    def run(root: Path, script: list[dict], *flags: str) -> tuple[int, str, str, str]:
        earlier = set(_LIVE)  # managers other tests left behind are not this run's
        with ScriptedModelServer(script) as model:
            status = main(
                ["ask", "a question", "--repo", str(root), "--model", "openai/scripted",
                 "--api-base", model.base_url, "--api-key", "test", *flags]
            )  # fmt: skip
            sent = json.dumps(model.requests)
        # the CLI stops the servers it started before it returns (not only at interpreter exit)
        started = [m for m in list(_LIVE) if m not in earlier]
        assert not [row for m in started for row in m.status() if row["state"] in ("ready", "starting")]
        out = capsys.readouterr()
        return status, out.out, out.err, sent

    yield run
    root_logger.handlers[:] = handlers
    root_logger.setLevel(level)


def _port_name(url: str) -> str:
    return f"http_{url.split(':')[-1].split('/')[0]}"


def test_config_file_and_flag_servers_with_allow_exec(tmp_path: Path, http_notes_url: str, ask):
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    config = {
        "mcpServers": {
            "notes": {"command": sys.executable, "args": [str(NOTES)]},
            "broken": {"command": sys.executable, "args": [str(BROKEN)]},
        }
    }
    (root / ".lsp-agent" / "mcp.json").write_text(json.dumps(config))
    user_config = tmp_path / "no-user-config" / "lsp-agent" / "config.toml"  # the workspace is trusted
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'trustedWorkspaces = ["{root}"]\n')
    web = _port_name(http_notes_url)
    script = [
        step("notes__lookup_note", topic="oncall"),
        step(f"{web}__add", a=20, b=22),
        step("task_complete", summary="Rotation changes Mondays; 20+22=42."),
    ]
    status, out, err, sent = ask(root, script, "--mcp-server", http_notes_url, "--allow-exec")
    assert status == 0, out + err
    assert "warning: MCP server 'broken'" in err and "missing NOTES_TOKEN" in err
    assert "continuing without its tools" in err
    assert re.search(rf"MCP: \d+ tool\(s\) from notes, {web}\n", err)
    assert "<- notes__lookup_note ok" in out and f"<- {web}__add ok" in out
    assert "every Monday at 09:00 UTC" in sent and "broken__" not in sent
    assert "success (complete)" in out


def test_without_a_terminal_or_allow_exec_mcp_tools_are_denied(tmp_path: Path, http_notes_url: str, ask):
    web = _port_name(http_notes_url)
    script = [step(f"{web}__add", a=1, b=2), step("task_complete", summary="could not add")]
    status, out, err, _ = ask(tmp_path, script, "--mcp-server", http_notes_url)
    assert status == 0, out + err
    assert re.search(rf"MCP: \d+ tool\(s\) from {web}\n", err)
    assert f"<- {web}__add failed" in out
    assert f"Permission denied: {web}__add would reach outside the workspace" in out
    assert "--allow-exec" in out


def test_bad_mcp_config_is_reported_and_the_run_goes_on(tmp_path: Path, ask):
    (tmp_path / ".lsp-agent").mkdir()
    (tmp_path / ".lsp-agent" / "mcp.json").write_text('{"mcpServers": {"x": {"args": []}}}')
    status, out, err, _ = ask(tmp_path, [step("task_complete", summary="ok")], "--mcp-server", "  ")
    assert status == 0, out + err
    assert "needs a 'command' (stdio server) or a 'url'" in err
    assert "--mcp-server needs a URL or a command" in err
