"""Choosing the prompt and tool profile, and the small profile's system prompt text."""

from __future__ import annotations

import pytest

from lsp_agent.agent.repair.profile import choose_profile
from lsp_agent.agent.repair.small_prompt import small_system_prompt
from lsp_agent.config import Settings
from lsp_agent.tools.registry import default_registry


@pytest.mark.parametrize(
    ("model", "changes", "expected"),
    [
        ("openai/gpt-4o-mini", {}, "full"),
        ("anthropic/claude-sonnet-4-5", {}, "full"),
        ("ollama/qwen2.5-coder:1.5b", {}, "small"),
        ("openai/Qwen2.5-Coder-7B-Instruct", {}, "small"),
        ("openai/llama-3.3-70b-instruct", {}, "full"),
        ("lm_studio/whatever", {}, "small"),
        ("openai/local", {"context_window": 16384}, "small"),
        ("openai/local", {}, "full"),
        ("ollama/qwen2.5-coder:1.5b", {"profile": "full"}, "full"),
        ("openai/gpt-4o", {"profile": "small"}, "small"),
    ],
)
def test_auto_picks_small_for_small_or_local_models(model: str, changes: dict, expected: str) -> None:
    assert choose_profile(Settings(model=model, **changes), model) == expected


def test_profile_setting_is_checked_and_read_from_the_environment() -> None:
    from lsp_agent.settings_sources import load_settings

    settings, errors = load_settings(None, environ={"LSP_AGENT_PROFILE": "small"})
    assert settings.profile == "small" and errors == []
    with pytest.raises(ValueError, match="expected one of auto, full, small"):
        Settings().replace(profile="tiny")


def test_small_prompt_lists_unknown_tools_by_their_first_sentence_and_uses_the_real_path() -> None:
    schemas = default_registry().schemas()
    text = small_system_prompt(mode="prompt", schemas=schemas, root_name="proj", example_path="lib/core.py")
    assert "- find_symbol(name): Find where a function, class, method or variable is defined" in text
    assert '"path": "lib/core.py"' in text and "`proj`" in text
    native = small_system_prompt(mode="native", schemas=schemas, root_name="proj", example_path="lib/core.py")
    assert "<ACTION>" not in native and "Tools:" not in native
