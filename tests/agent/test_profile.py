"""Choosing the run profile, the profile object a run calls, and the small profile's system prompt text."""

from __future__ import annotations

import pytest
from agent_support import call, run_script

from lsp_agent.agent.loop.run import profile_for
from lsp_agent.agent.repair.profile import RunProfile, choose_profile
from lsp_agent.agent.repair.small_profile import SmallProfile
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


def test_profile_for_gives_the_small_object_to_react_runs_of_small_models_only() -> None:
    small = "ollama/qwen2.5-coder:1.5b"
    assert type(profile_for(Settings(model=small), small)) is SmallProfile
    assert (
        type(profile_for(Settings(model=small, style="codeact"), small)) is RunProfile
    )  # keeps its own tools
    assert type(profile_for(Settings(model="openai/gpt-4o"), "openai/gpt-4o")) is RunProfile


class Recording(RunProfile):
    """A profile that writes its own system prompt, refuses the first plain answer and ends the run itself once a
    tool step ran: what the loop asks of a profile, observed."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.stepped = False

    def system_prompt(self, run, mode: str) -> str:
        return "SYSTEM FROM THE PROFILE"

    async def first_message(self, run, task_text: str) -> str:
        self.calls.append("first_message")
        return f"{task_text}\nFIRST MESSAGE FROM THE PROFILE"

    async def before_loop(self, run):
        self.calls.append("before_loop")
        return None

    def refusal(self, run) -> str | None:
        self.calls.append("refusal")
        return "NOT YET: read pkg/calc.py first" if not self.stepped else None

    def after_correction(self, run, messages) -> None:
        self.calls.append("after_correction")

    def after_step(self, run, messages) -> None:
        self.calls.append("after_step")
        self.stepped = True

    def finished_answer(self, run) -> str | None:
        return "ended by the profile" if self.stepped else None


async def test_a_run_calls_the_profile_it_is_given(workspace) -> None:
    profile = Recording()
    script = [{"content": "It is fine as it is."}, {"tool_calls": [call("read_file", path="pkg/calc.py")]}]
    out = await run_script(workspace, script, profile=profile)
    assert out.run.profile is profile and out.of("start")[0]["profile"] == "recording"
    assert out.result.answer == "ended by the profile" and out.result.success
    first, second = out.requests
    assert first["messages"][0]["content"] == "SYSTEM FROM THE PROFILE"
    assert "FIRST MESSAGE FROM THE PROFILE" in first["messages"][-1]["content"]
    assert second["messages"][-1]["content"] == "NOT YET: read pkg/calc.py first"
    assert profile.calls == ["first_message", "before_loop", "refusal", "after_correction", "after_step"]
