"""MCP servers and their start timeout from the config files, and `lsp-agent ask` run by a user config file."""

from __future__ import annotations

import io
import json
import logging
import os
import shlex
import sys
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.mcp.config import servers_for
from lsp_agent.testing.scripted_model import ScriptedModelServer

NOTES = Path(__file__).parents[1] / "mcp" / "servers" / "notes_server.py"
HANG = shlex.join([sys.executable, "-c", "import sys; sys.stdin.read()"])  # never answers initialize


def user_file() -> Path:
    """The user's config.toml under the test's private XDG_CONFIG_HOME."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_the_overall_start_timeout_reaches_every_way_a_server_is_given(tmp_path: Path) -> None:
    mcp_json = user_file().parent / "mcp.json"
    mcp_json.write_text(
        json.dumps(
            {"mcpServers": {"fromjson": {"command": "a"}, "own": {"command": "b", "startupTimeout": 5}}}
        )
    )
    settings = Settings(mcp_servers={"fromsettings": {"command": "c"}}, mcp_startup_timeout=45.0)
    servers, errors = servers_for(settings, tmp_path, ["python srv.py", "http://127.0.0.1:9/mcp"])
    assert errors == []
    timeouts = {s.name: s.startup_timeout for s in servers}
    assert timeouts == {"fromjson": 45.0, "own": 5.0, "fromsettings": 45.0, "srv": 45.0, "http_9": 45.0}
    default = servers_for(Settings(), tmp_path, ["x"])[0]
    assert {s.name: s.startup_timeout for s in default} == {"fromjson": 10.0, "own": 5.0, "x": 10.0}


def test_a_workspace_mcp_json_starts_nothing_until_the_workspace_is_trusted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    (root / ".lsp-agent" / "mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "sh"}}}))
    servers, errors = servers_for(Settings(), root)
    assert servers == []
    assert "MCP servers from a workspace file are not started (evil)" in errors[0]
    assert f'trustedWorkspaces = ["{root.resolve()}"]' in errors[0]
    user_file().write_text(f'trustedWorkspaces = ["{root}"]\n')
    servers, errors = servers_for(Settings(), root)
    assert [s.name for s in servers] == ["evil"] and errors == []


@pytest.fixture
def ask(monkeypatch, capsys, litellm_imported):
    """`lsp-agent ask` in this process with no terminal; returns (status, stdout, stderr, log text)."""
    from lsp_agent.cli.main import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level

    def run(root: Path, script: list[dict], *flags: str) -> tuple[int, str, str, str]:
        log = root.parent / "ask.log"
        with ScriptedModelServer(script) as model:
            status = main(
                ["ask", "a question", "--repo", str(root), "--model", "openai/scripted", "--api-base",
                 model.base_url, "--api-key", "test", "--log-file", str(log), "--log-level", "INFO", *flags]
            )  # fmt: skip
        out = capsys.readouterr()
        return status, out.out, out.err, log.read_text()

    yield run
    root_logger.handlers[:] = handlers
    root_logger.setLevel(level)


def step(name: str, **arguments: object) -> dict:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = [step("notes__lookup_note", topic="oncall"), step("task_complete", summary="Mondays.")]


def test_the_user_file_sets_a_cli_runs_window_permissions_and_mcp_timeout(tmp_path: Path, ask) -> None:
    user_file().write_text(
        "contextWindow = 65432\nmcpStartupTimeout = 1\n"
        '[permissions]\nallow = ["notes__lookup_note"]\n'
        f"[mcpServers.notes]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NOTES))}]\n"
        "startupTimeout = 60\n"  # its own timeout wins over the 1 s for every server
    )
    root = tmp_path / "ws"
    root.mkdir()
    status, out, err, log = ask(root, SCRIPT, "--mcp-server", HANG)
    assert status == 0, out + err
    assert "context window 65432," in log
    # allowed by the file: without it, a run with no terminal and no --allow-exec is denied the MCP tool
    assert "<- notes__lookup_note ok" in out and "Permission denied" not in out
    assert "MCP server 'import_sys_sys_stdin_read'" in err and "did not start within 1s" in err  # the flag's


def test_a_workspace_file_that_allows_exec_is_refused_in_the_cli(tmp_path: Path, ask) -> None:
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    (root / ".lsp-agent" / "config.toml").write_text(
        'contextWindow = 65433\nallowUnisolatedExec = true\n[permissions]\nnotes__lookup_note = "allow"\n'
        f"[mcpServers.notes]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NOTES))}]\n"
    )
    status, out, err, log = ask(root, SCRIPT)
    assert status == 0, out + err
    for key in ("allowUnisolatedExec", "permissions", "mcpServers"):
        assert (
            f"warning: {root / '.lsp-agent' / 'config.toml'}: {key} is not taken from a workspace file" in err
        )
    assert "context window 65433," in log  # the harmless setting of the same file applies
    assert "MCP:" not in err and "<- notes__lookup_note failed" in out  # its server was never started
