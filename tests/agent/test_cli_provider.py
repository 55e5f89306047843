"""Seed 004's `--llm-provider` on `lsp-agent ask`: the provider's model unless --model (or the configured model) is
one of its own, and a clear error when --model is another provider's."""

from __future__ import annotations

import logging

import pytest
from agent_support import done

from lsp_agent.cli.common import provider_model
from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.fixture(autouse=True)
def _restore_logging():
    """In-process CLI runs install a log handler; take it away again."""
    root = logging.getLogger()
    level = root.level
    yield
    for handler in [h for h in root.handlers if h.get_name() == "lsp-agent-cli"]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def test_provider_model_rules() -> None:
    assert provider_model(None, "openai/x", "gemini/y") is None  # no provider: the configured model stands
    assert provider_model("claude", None, None) == "anthropic/claude-sonnet-4-5"
    assert provider_model("gemini", None, "openai/gpt-4o-mini") == "gemini/gemini-2.5-flash"
    assert (
        provider_model("gemini", None, "gemini/gemini-2.5-pro") == "gemini/gemini-2.5-pro"
    )  # configured, its own
    assert provider_model("claude", "claude-opus-4-1", None) == "anthropic/claude-opus-4-1"
    assert provider_model("openai", "openai/scripted", "gemini/y") == "openai/scripted"
    with pytest.raises(ValueError, match="--model gemini/gemini-2.5-pro is not a claude model"):
        provider_model("claude", "gemini/gemini-2.5-pro", None)


def test_ask_with_llm_provider_talks_to_that_providers_model(workspace, capsys, monkeypatch) -> None:
    from lsp_agent.cli.main import main

    monkeypatch.setenv("LSP_AGENT_MODEL", "gemini/gemini-2.5-flash")  # configured, but another provider's
    with ScriptedModelServer([done("nothing to do")]) as server:
        status = main(
            ["ask", "say hi", "--repo", str(workspace), "--llm-provider", "openai", "--model", "scripted"]
            + ["--api-base", server.base_url, "--api-key", "test"]
        )
        requests = server.requests
    out = capsys.readouterr().out
    assert status == 0 and "(model openai/scripted," in out
    assert requests[0]["model"] == "scripted"  # litellm's openai provider sent it to the scripted server


def test_ask_refuses_a_model_of_another_provider(workspace, capsys) -> None:
    from lsp_agent.cli.main import main

    status = main(
        ["ask", "say hi", "--repo", str(workspace), "--llm-provider", "claude", "--model", "openai/x"]
    )
    err = capsys.readouterr().err
    assert status == 2 and "--model openai/x is not a claude model (those start with anthropic/)" in err
