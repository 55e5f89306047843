"""The user's and the workspace's config.toml: precedence, origins, validation messages and workspace trust."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.config_files import user_config_file
from lsp_agent.settings_sources import load_settings, load_sources


@pytest.fixture
def user_file() -> Path:
    """The user's config.toml under the test's private XDG_CONFIG_HOME."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    assert user_config_file() == path
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".lsp-agent").mkdir(parents=True)
    return root


def test_user_file_sets_every_kind_of_setting(user_file: Path, workspace: Path) -> None:
    user_file.write_text(
        'model = "ollama/qwen2.5-coder:7b"\n'
        "contextWindow = 16384\n"
        "mcpStartupTimeout = 45\n"
        'index.exclude = ["*.min.js"]\n'
        "index.maxFileSize = 5000\n"
        'secretFiles = ["*.pem"]\n'
        "[permissions]\n"
        'allow = ["run_tests"]\n'
        'deny = ["run_command"]\n'
        "[mcpServers.files]\n"
        'command = "npx"\n'
        'args = ["-y", "@modelcontextprotocol/server-filesystem"]\n'
        "startupTimeout = 90\n"
    )
    loaded = load_sources(workspace, environ={})
    settings = loaded.settings
    assert loaded.errors == []
    assert settings.model == "ollama/qwen2.5-coder:7b" and settings.context_window == 16384
    assert settings.mcp_startup_timeout == 45.0
    assert (
        settings.index_exclude == ["*.min.js"] and settings.max_file_size == 5000
    )  # dotted keys (a table works too)
    assert settings.secret_files == ["*.pem"]
    assert settings.permissions == {"run_tests": "allow", "run_command": "deny"}
    assert settings.mcp_servers["files"]["startupTimeout"] == 90
    assert loaded.origin("context_window") == f"file:{user_file}"
    assert loaded.origin("max_iterations") == "default"
    assert loaded.files == [user_file]


def test_precedence_flags_editor_env_dotenv_workspace_user_default(user_file: Path, workspace: Path) -> None:
    user_file.write_text(
        'model = "user/m"\nreasoningEffort = "low"\napiKey = "user-key"\nmaxIterations = 3\n'
        "tokenBudget = 100\nmaxTokens = 111\n"
    )
    (workspace / ".lsp-agent" / "config.toml").write_text(
        'model = "ws/m"\nreasoningEffort = "medium"\napiKey = "ws-key"\nmaxIterations = 4\ntokenBudget = 200\n'
    )
    (workspace / ".env").write_text("LSP_AGENT_MODEL=dotenv/m\nLSP_AGENT_REASONING_EFFORT=high\n")
    env = {"LSP_AGENT_MODEL": "env/m", "LSP_AGENT_MAX_ITERATIONS": "6"}
    client = {"lspAgent": {"maxIterations": 7, "apiKey": "editor-key"}}
    loaded = load_sources(workspace, flags={"max_iterations": 8}, client=client, environ=env)
    s = loaded.settings
    assert loaded.errors == []
    assert s.max_iterations == 8 and loaded.origin("max_iterations") == "command line"
    assert s.api_key == "editor-key" and loaded.origin("api_key") == "editor settings"
    assert s.model == "env/m" and loaded.origin("model") == "env:LSP_AGENT_MODEL"
    assert s.reasoning_effort == "high"
    assert loaded.origin("reasoning_effort") == f".env:{workspace / '.env'} (LSP_AGENT_REASONING_EFFORT)"
    assert s.token_budget == 200 and loaded.origin("token_budget").endswith(".lsp-agent/config.toml")
    assert s.max_tokens == 111 and loaded.origin("max_tokens") == f"file:{user_file}"
    assert s.request_timeout == 120.0 and loaded.origin("request_timeout") == "default"


def test_a_bad_value_names_file_and_key_and_the_next_source_applies(user_file: Path, workspace: Path) -> None:
    user_file.write_text("maxIterations = 5\n[index]\nmaxFileSize = 0\n")
    ws_file = workspace / ".lsp-agent" / "config.toml"
    ws_file.write_text('maxIterations = -2\nstyle = "freeform"\nmaxIteration = 3\n')
    settings, errors = load_settings(workspace, environ={})
    assert (
        f"{ws_file}: maxIterations = -2: expected a positive whole number (ignored: the next source's "
        in ("\n".join(errors))
    )
    assert f'{ws_file}: style = "freeform": expected one of react, codeact' in "\n".join(errors)
    assert f"{ws_file}: unknown setting 'maxIteration' (did you mean 'maxIterations'?)" in errors
    assert f"{user_file}: index.maxFileSize = 0: expected a positive whole number" in "\n".join(errors)
    assert settings.max_iterations == 5  # the user file's, the next source down
    assert settings.style == "react" and settings.max_file_size == 1_000_000


def test_a_file_that_is_not_toml_is_reported_and_skipped(user_file: Path, workspace: Path) -> None:
    user_file.write_text("maxIterations = 5\nmodel = unquoted\n")
    settings, errors = load_settings(workspace, environ={})
    assert len(errors) == 1 and errors[0].startswith(f"{user_file}: not valid TOML (")
    assert "line 2" in errors[0] and settings.max_iterations == 30


def test_a_workspace_file_cannot_grant_itself_permissions_or_exec(user_file: Path, workspace: Path) -> None:
    ws_file = workspace / ".lsp-agent" / "config.toml"
    ws_file.write_text(
        'trustedWorkspaces = ["/"]\nallowUnisolatedExec = true\npython = "/tmp/evil"\nmaxIterations = 9\n'
        '[permissions]\nrun_command = "allow"\n[mcpServers.x]\ncommand = "sh"\n'
    )
    (workspace / ".env").write_text("LSP_AGENT_ALLOW_UNISOLATED_EXEC=1\n")
    user_file.write_text('[permissions]\nread_file = "allow"\n')
    settings, errors = load_settings(workspace, environ={})
    text = "\n".join(errors)
    for key in ("allowUnisolatedExec", "python", "permissions", "mcpServers"):
        assert f"{ws_file}: {key} is not taken from a workspace file" in text
    assert f"{workspace / '.env'}: LSP_AGENT_ALLOW_UNISOLATED_EXEC is not taken from a workspace file" in text
    assert f"set it in your user file {user_file} or your environment, or trust this workspace" in text
    assert f'trustedWorkspaces = ["{workspace.resolve()}"]' in text
    assert f"{ws_file}: trustedWorkspaces is read from the user file only" in text
    assert settings.allow_unisolated_exec is False and settings.python is None
    assert settings.permissions == {"read_file": "allow"} and settings.mcp_servers == {}
    assert settings.max_iterations == 9  # the harmless settings of the same file still apply


def test_a_trusted_workspace_may_set_guarded_settings(user_file: Path, workspace: Path) -> None:
    user_file.write_text(f'trustedWorkspaces = ["{workspace.parent}"]\n[permissions]\nread_file = "deny"\n')
    (workspace / ".lsp-agent" / "config.toml").write_text(
        '[permissions]\nrun_tests = "allow"\n[mcpServers.x]\ncommand = "sh"\n'
    )
    (workspace / ".env").write_text("LSP_AGENT_ALLOW_UNISOLATED_EXEC=1\n")
    loaded = load_sources(workspace, environ={}, client={"permissions": {"read_file": "allow"}})
    assert loaded.errors == [] and loaded.trusted
    s = loaded.settings
    assert s.allow_unisolated_exec is True and set(s.mcp_servers) == {"x"}
    # objects merge by entry: the editor's read_file replaces the user file's, the workspace's run_tests stays
    assert s.permissions == {"read_file": "allow", "run_tests": "allow"}
    assert loaded.entry_origins["permissions"] == {
        "read_file": "editor settings",
        "run_tests": f"file:{workspace / '.lsp-agent' / 'config.toml'}",
    }


def test_trust_covers_the_listed_folder_and_below_only(user_file: Path, tmp_path: Path) -> None:
    inside, outside = tmp_path / "trusted" / "proj", tmp_path / "trusted-not" / "proj"
    for root in (inside, outside):
        (root / ".lsp-agent").mkdir(parents=True)
        (root / ".lsp-agent" / "config.toml").write_text("allowUnisolatedExec = true\n")
    user_file.write_text(f'trustedWorkspaces = ["{tmp_path / "trusted"}"]\n')
    assert load_settings(inside, environ={})[0].allow_unisolated_exec is True
    settings, errors = load_settings(outside, environ={})
    assert settings.allow_unisolated_exec is False and "not taken from a workspace file" in errors[0]
    user_file.write_text("trustedWorkspaces = 1\n")
    assert "trustedWorkspaces = 1: expected a list of paths" in load_settings(inside, environ={})[1][0]


def test_a_replay_can_leave_the_user_file_out(user_file: Path, workspace: Path) -> None:
    user_file.write_text("maxIterations = 5\n")
    (workspace / ".lsp-agent" / "config.toml").write_text("tokenBudget = 7\n")
    settings, errors = load_settings(workspace, environ={}, user_file=False)
    assert errors == [] and settings.max_iterations == 30 and settings.token_budget == 7
