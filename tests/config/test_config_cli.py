"""`lsp-agent config`: every setting with its origin, `--check` and `--json` (run in this process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lsp_agent.cli.main import main


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(user file, workspace root) with the user file under the test's XDG_CONFIG_HOME."""
    for var in [v for v in os.environ if v.startswith("LSP_AGENT_")]:
        monkeypatch.delenv(var)
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.toml"
    user.parent.mkdir(parents=True)
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    return user, root


def test_each_value_is_shown_with_where_it_came_from(files, capsys, monkeypatch) -> None:
    user, root = files
    user.write_text(
        'apiKey = "sk-secret"\ncontextWindow = 16384\n[mcpServers.files]\ncommand = "npx"\n'
        'env = {TOKEN = "t0ken", HOME_DIR = "${HOME}"}\n'
    )
    (root / ".lsp-agent" / "config.toml").write_text("maxIterations = 5\n")
    (root / ".env").write_text("LSP_AGENT_STYLE=codeact\n")
    monkeypatch.setenv("LSP_AGENT_MODEL", "openai/gpt-4o-mini")
    assert main(["config", "--repo", str(root)]) == 0
    out = capsys.readouterr().out
    lines = {
        line.split("  #")[0].strip(): line.rsplit("# ", 1)[1] for line in out.splitlines() if "  # " in line
    }
    assert lines['model = "openai/gpt-4o-mini"'] == "env:LSP_AGENT_MODEL"
    assert lines["maxIterations = 5"] == f"file:{root / '.lsp-agent' / 'config.toml'}"
    assert lines["contextWindow = 16384"] == f"file:{user}"
    assert lines['style = "codeact"'] == f".env:{root / '.env'} (LSP_AGENT_STYLE)"
    assert lines["requestTimeout = 120.0"] == "default"
    assert lines['apiKey = "***"'] == f"file:{user}" and "sk-secret" not in out  # secrets masked
    files_line = 'mcpServers.files = { command = "npx", env = { TOKEN = "***", HOME_DIR = "${HOME}" } }'
    assert lines[files_line] == f"file:{user}"
    assert f"# workspace:      {root} (not trusted" in out


def test_check_names_file_and_key_and_exits_non_zero(files, capsys) -> None:
    user, root = files
    assert main(["config", "--check", "--repo", str(root)]) == 0
    assert capsys.readouterr().out.startswith("ok (checked: no config file found; the environment;")
    user.write_text("maxIterations = 0\n")
    (root / ".lsp-agent" / "config.toml").write_text('[permissions]\nrun_command = "allow"\n')
    assert main(["config", "--check", "--repo", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"error: {user}: maxIterations = 0: expected a positive whole number" in out
    assert (
        f"error: {root / '.lsp-agent' / 'config.toml'}: permissions is not taken from a workspace file" in out
    )
    assert "2 problem(s)" in out


def test_json_reports_values_origins_trust_and_entries(files, capsys) -> None:
    user, root = files
    user.write_text(f'trustedWorkspaces = ["{root}"]\n[permissions]\nread_file = "deny"\n')
    (root / ".lsp-agent" / "config.toml").write_text(
        'permissions.run_tests = "allow"\nmcpStartupTimeout = 30\n'
    )
    assert main(["config", "--json", "--repo", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["trusted"] is True and data["errors"] == []
    assert data["found"] == [str(user), str(root / ".lsp-agent" / "config.toml")]
    timeout = data["settings"]["mcpStartupTimeout"]
    assert timeout == {"value": 30, "origin": f"file:{root / '.lsp-agent' / 'config.toml'}",
                       "env": "LSP_AGENT_MCP_STARTUP_TIMEOUT"}  # fmt: skip
    permissions = data["settings"]["permissions"]
    assert permissions["value"] == {"read_file": "deny", "run_tests": "allow"}
    assert permissions["entries"] == {"read_file": f"file:{user}", "run_tests": timeout["origin"]}


def test_trust_adds_the_workspace_to_the_user_file_and_keeps_the_rest(files, capsys) -> None:
    user, root = files
    (root / ".lsp-agent" / "config.toml").write_text('[permissions]\nedit_files = "allow"\n')
    assert main(["config", "--check", "--repo", str(root)]) == 1
    assert "`lsp-agent config --trust` adds it" in capsys.readouterr().out
    assert main(["config", "--trust", "--repo", str(root)]) == 0  # no user file yet: one is written
    assert capsys.readouterr().out == f"trusted: {root} ({user})\n"
    assert main(["config", "--check", "--repo", str(root)]) == 0
    user.write_text(
        '# mine\nmodel = "m"\ntrustedWorkspaces = [\n  "/srv/a",  # work\n]  # list\n[permissions]\n'
    )
    assert main(["config", "--trust", "--repo", str(root)]) == 0
    assert main(["config", "--trust", "--repo", str(root / ".lsp-agent")]) == 0  # inside: already trusted
    assert capsys.readouterr().out.splitlines()[-1].startswith("already trusted:")
    assert user.read_text() == (
        f'# mine\nmodel = "m"\ntrustedWorkspaces = ["/srv/a", "{root}"]\n[permissions]\n'
    )
    user.write_text('[lspAgent]\ntrustedWorkspaces = ["/srv/a"]\n')  # a shape it will not rewrite
    assert main(["config", "--trust", "--repo", str(root)]) == 1
    assert "add it to trustedWorkspaces by hand" in capsys.readouterr().err.replace(f'"{root}" ', "it ")


def test_index_and_search_take_the_index_settings_from_the_files(files, capsys) -> None:
    user, root = files
    user.write_text('index.exclude = ["generated/"]\nindex.maxFileSize = "huge"\n')
    (root / "generated").mkdir()
    (root / "generated" / "tables.py").write_text("def zebra_lookup_table():\n    return 1\n")
    (root / "zoo.py").write_text("def zebra_feeding_schedule():\n    return 2\n")
    assert main(["index", str(root), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["search", "zebra", "--repo", str(root), "--json"]) == 0
    out = capsys.readouterr()
    assert {hit["path"] for hit in json.loads(out.out)} == {"zoo.py"}  # generated/ left out by the user file
    assert f'warning: {user}: index.maxFileSize = "huge": expected a positive whole number' in out.err


def test_check_covers_the_mcp_server_definitions(files, capsys, monkeypatch) -> None:
    user, root = files
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    user.write_text(
        '[mcpServers.api]\nurl = "https://example.invalid/mcp"\nheaders = {A = "${NO_SUCH_TOKEN}"}\n'
    )
    (root / ".lsp-agent" / "mcp.json").write_text('{"mcpServers": {"repo": {"command": "sh"}}}')
    assert main(["config", "--check", "--repo", str(root)]) == 1
    out = capsys.readouterr().out
    assert "MCP server 'api' (settings)" in out and "NO_SUCH_TOKEN" in out
    assert (
        f"error: {root / '.lsp-agent' / 'mcp.json'}: MCP servers from a workspace file are not started" in out
    )
