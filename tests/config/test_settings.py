"""Settings precedence and validation."""

from pathlib import Path

import pytest

from lsp_agent.config import ModelNotConfigured, Settings
from lsp_agent.settings_sources import load_settings


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings, errors = load_settings(tmp_path, environ={})
    assert errors == []
    assert settings == Settings()
    assert settings.tool_calling == "auto" and settings.max_iterations == 30 and settings.model is None


def test_precedence_flags_client_env_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("LSP_AGENT_MODEL=dotenv/model\nLSP_AGENT_API_KEY=dotenv-key\n")
    client = {
        "lspAgent": {"model": "client/model", "apiBase": "http://client", "maxIterations": 7, "plan": True}
    }
    env = {"LSP_AGENT_API_BASE": "http://env", "LSP_AGENT_TOOL_CALLING": "prompt"}
    settings, errors = load_settings(
        tmp_path, client=client, environ=env, flags={"model": "flag/model", "plan": None}
    )
    assert errors == []
    assert settings.model == "flag/model"  # flags win
    # the editor's explicit setting beats the environment and .env
    assert settings.api_base == "http://client"
    assert settings.tool_calling == "prompt"  # the environment fills a gap the editor left
    assert settings.api_key == "dotenv-key"  # and so does .env, below the environment
    # the editor beats defaults; a None flag is unset
    assert settings.max_iterations == 7 and settings.plan is True


def test_environment_beats_dotenv_and_client_beats_both(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("LSP_AGENT_MODEL=dotenv/model\n")
    settings, _ = load_settings(tmp_path, environ={"LSP_AGENT_MODEL": "env/model"})
    assert settings.model == "env/model"
    settings, _ = load_settings(
        tmp_path, client={"model": "client/model"}, environ={"LSP_AGENT_MODEL": "env/model"}
    )
    assert settings.model == "client/model"


def test_bad_values_are_named_and_fall_back(tmp_path: Path) -> None:
    client = {
        "toolCalling": "sometimes",
        "maxIterations": -3,
        "index": {"maxFileSize": "big", "exclude": ["*.min.js"]},
        "nonsense": 1,
        "permissions": {"run_python": "maybe"},
    }
    settings, errors = load_settings(tmp_path, client=client, environ={})
    text = "\n".join(errors)
    for name in ("tool_calling", "max_iterations", "max_file_size", "lspAgent.nonsense", "permissions"):
        assert name in text
    assert settings.tool_calling == "auto" and settings.max_iterations == 30
    assert settings.max_file_size == 1_000_000
    assert settings.index_exclude == ["*.min.js"]  # the good value in the same object is kept


def test_permissions_and_mcp_shapes(tmp_path: Path) -> None:
    client = {
        "permissions": {"allow": ["run_tests"], "deny": ["run_command"]},
        "mcpServers": {
            "files": {"command": "python", "args": ["-m", "srv"]},
            "web": {"url": "http://127.0.0.1:9/mcp"},
        },
    }
    settings, errors = load_settings(tmp_path, client=client, environ={})
    assert errors == []
    assert settings.permissions == {"run_tests": "allow", "run_command": "deny"}
    assert set(settings.mcp_servers) == {"files", "web"}
    _, errors = load_settings(tmp_path, client={"mcpServers": {"x": {"args": []}}}, environ={})
    assert "needs a 'command'" in errors[0]


def test_missing_model_message_names_the_fix() -> None:
    with pytest.raises(ModelNotConfigured, match="--model.*LSP_AGENT_MODEL"):
        Settings().require_model("cli")
    with pytest.raises(ModelNotConfigured, match="lspAgent.model"):
        Settings().require_model("editor")
    assert Settings(model="openai/x").require_model() == "openai/x"


def test_replace_validates() -> None:
    assert Settings().replace(plan="true").plan is True
    with pytest.raises(ValueError, match="max_iterations"):
        Settings().replace(max_iterations=0)
