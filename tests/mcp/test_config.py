"""MCP server definitions: editor settings, config files, --mcp-server flags, precedence and errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lsp_agent.mcp.config import (
    DEFAULT_STARTUP_TIMEOUT,
    collect_servers,
    parse_server,
    parse_servers,
    read_config_file,
    server_from_flag,
)
from lsp_agent.settings_sources import load_settings


def test_stdio_and_http_entries_in_the_editors_shape():
    servers, errors = parse_servers(
        {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "search": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer x"}},
            "fetch": {
                "command": "uvx",
                "args": ["mcp-server-fetch"],
                "env": {"DEBUG": True},
                "startupTimeout": 3,
            },
        }
    )
    assert errors == []
    files, search, fetch = servers
    assert (files.transport, files.command, files.args) == (
        "stdio",
        "npx",
        ("-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
    )
    assert files.startup_timeout == DEFAULT_STARTUP_TIMEOUT
    assert (search.transport, search.url, dict(search.headers)) == (
        "http",
        "http://127.0.0.1:9000/mcp",
        {"Authorization": "Bearer x"},
    )
    assert dict(fetch.env) == {"DEBUG": "true"}
    assert fetch.startup_timeout == 3.0


def test_bad_entries_are_named_and_skipped():
    servers, errors = parse_servers(
        {
            "ok": {"command": "srv"},
            "nothing": {"args": ["x"]},
            "badargs": {"command": "srv", "args": "x y"},
            "ftp": {"url": "ftp://host/mcp"},
            "slow": {"command": "srv", "startupTimeout": -1},
            "off": {"command": "srv", "disabled": True},
        }
    )
    assert [s.name for s in servers] == ["ok"]
    text = "\n".join(errors)
    assert "'nothing'" in text and "needs a 'command'" in text
    assert "'badargs'" in text and "'args' must be a list" in text
    assert "'ftp'" in text and "http://" in text
    assert "'slow'" in text and "positive" in text
    assert len(errors) == 4


@pytest.mark.parametrize(
    ("flag", "name", "transport"),
    [
        ("http://127.0.0.1:8123/mcp", "http_8123", "http"),
        ("https://tools.example.com/mcp", "tools", "http"),
        (f"{sys.executable} tests/mcp/servers/notes_server.py", "notes_server", "stdio"),
        ("npx -y @modelcontextprotocol/server-filesystem@1.2 /tmp", "filesystem", "stdio"),
        ("uvx mcp-server-fetch", "fetch", "stdio"),
    ],
)
def test_flag_is_a_url_or_a_shell_split_command(flag, name, transport):
    server = server_from_flag(flag)
    assert (server.name, server.transport) == (name, transport)
    if transport == "stdio":
        assert server.command == flag.split()[0]
        assert list(server.args) == flag.split()[1:]


def test_flag_names_stay_unique_and_quotes_are_honoured():
    server = server_from_flag("'my server' --root 'a b'", taken=["my_server"])
    assert server.command == "my server"
    assert server.args == ("--root", "a b")
    assert server.name == "my_server_2"
    with pytest.raises(ValueError, match="cannot split"):
        server_from_flag('srv "unclosed')


def test_config_files_settings_and_flags_in_precedence_order(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    home_file = tmp_path / "home" / ".config" / "lsp-agent" / "mcp.json"
    home_file.parent.mkdir(parents=True)
    home_file.write_text(
        json.dumps({"mcpServers": {"mine": {"command": "old"}, "homeonly": {"command": "h"}}})
    )
    user_file = tmp_path / "xdg" / "lsp-agent" / "mcp.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(
        json.dumps(
            {"mcpServers": {"shared": {"command": "user-srv"}, "mine": {"url": "http://127.0.0.1:1/mcp"}}}
        )
    )
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    (root / ".lsp-agent" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"shared": {"command": "ws-srv"}}})
    )
    # a workspace's servers start only in a workspace the user trusts (tests/config/test_config_mcp.py)
    (tmp_path / "xdg" / "lsp-agent" / "config.toml").write_text(f'trustedWorkspaces = ["{root}"]\n')
    servers, errors = collect_servers(
        root, {"editor": {"command": "ed-srv"}}, ["http://127.0.0.1:5000/mcp", "python extra.py"]
    )
    assert errors == []
    by_name = {s.name: s for s in servers}
    assert by_name["shared"].command == "ws-srv"  # the workspace file beats the user's
    assert by_name["mine"].url == "http://127.0.0.1:1/mcp"  # XDG_CONFIG_HOME's file beats ~/.config's
    assert by_name["homeonly"].command == "h"
    assert by_name["editor"].command == "ed-srv"
    assert by_name["http_5000"].transport == "http"
    assert by_name["extra"].args == ("extra.py",)


def test_config_file_errors_are_actionable(tmp_path: Path):
    bad = tmp_path / "mcp.json"
    bad.write_text('{"mcpServers": {"a": {"command": "x",}}}')
    assert read_config_file(bad)[1][0].startswith(f"{bad}: not valid JSON")
    bad.write_text('{"tools": {}}')
    assert 'no "mcpServers" key' in read_config_file(bad)[1][0]
    bad.write_text('{"servers": {"a": {"type": "stdio", "command": "x"}, "b": {"type": "ws", "url": "x"}}}')
    servers, errors = read_config_file(bad)
    assert [s.name for s in servers] == ["a"]
    assert "unknown type 'ws'" in errors[0]
    assert read_config_file(tmp_path / "absent.json") == ([], [])


def test_settings_mcp_servers_feed_the_manager_config():
    settings, errors = load_settings(None, client={"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp"}}})
    assert errors == []
    servers, errors = collect_servers(None, settings.mcp_servers, read_files=False)
    assert [(s.name, s.transport) for s in servers] == [("web", "http")]


def test_sse_type_and_describe():
    server = parse_server("old", {"type": "sse", "url": "http://127.0.0.1:3/sse"})
    assert server.transport == "sse"
    assert server.describe() == "http://127.0.0.1:3/sse"
    assert parse_server("s", {"command": "a b", "args": ["c d"]}).describe() == "'a b' 'c d'"


def test_variables_are_expanded_in_env_args_url_and_headers(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MCP_TOKEN", "s3cret")
    monkeypatch.setenv("MCP_PORT", "8123")
    monkeypatch.delenv("MCP_UNSET", raising=False)
    monkeypatch.setenv("MCP_EMPTY", "")
    servers, errors = parse_servers(
        {
            "local": {
                "command": "${userHome}/bin/srv",
                "args": [
                    "--root",
                    "${workspaceFolder}",
                    "--token=${env:MCP_TOKEN}",
                    "${MCP_UNSET:-fallback}",
                ],
                "env": {"TOKEN": "${MCP_TOKEN}", "LEVEL": "${MCP_EMPTY:-info}", "PLAIN": "$HOME stays"},
            },
            "remote": {
                "url": "http://127.0.0.1:${MCP_PORT}/mcp",
                "headers": {"Authorization": "Bearer ${env:MCP_TOKEN}"},
            },
        },
        root=tmp_path,
    )
    assert errors == []
    local, remote = servers
    assert local.command == f"{Path.home()}/bin/srv"
    assert local.args == ("--root", str(tmp_path), "--token=s3cret", "fallback")
    assert dict(local.env) == {"TOKEN": "s3cret", "LEVEL": "info", "PLAIN": "$HOME stays"}
    assert remote.url == "http://127.0.0.1:8123/mcp"
    assert dict(remote.headers) == {"Authorization": "Bearer s3cret"}
    # messages and status show the configuration as written, never the expanded secret
    assert "s3cret" not in local.describe() and "${env:MCP_TOKEN}" in local.describe()
    assert remote.describe() == "http://127.0.0.1:${MCP_PORT}/mcp"


def test_an_unset_variable_is_a_clear_error_and_only_that_server_is_left_out(monkeypatch):
    monkeypatch.delenv("MCP_UNSET", raising=False)
    servers, errors = parse_servers(
        {
            "gh": {"command": "srv", "env": {"GITHUB_TOKEN": "${env:MCP_UNSET}"}},
            "web": {"url": "http://h/mcp", "headers": {"X-Key": "${MCP_UNSET}"}},
            "vscode": {"command": "srv", "args": ["${input:token}"]},
            "ok": {"command": "srv", "args": ["${MCP_UNSET:-}"]},
        }
    )
    assert [(s.name, s.args) for s in servers] == [("ok", ("",))]
    gh, web, vscode = errors
    assert gh == (
        "MCP server 'gh' (settings): env.GITHUB_TOKEN uses ${env:MCP_UNSET}, but the environment variable "
        "MCP_UNSET is not set; set it in the environment the language server (or lsp-agent) starts with, or "
        "give a default: ${MCP_UNSET:-value}"
    )
    assert web.startswith("MCP server 'web' (settings): headers.X-Key uses ${MCP_UNSET}, but")
    assert "args[0] uses ${input:token}, which lsp-agent cannot fill in" in vscode
    with pytest.raises(ValueError, match=r"\$\{workspaceFolder\}, but there is no workspace folder"):
        parse_server("w", {"command": "srv", "cwd": "${workspaceFolder}"})
