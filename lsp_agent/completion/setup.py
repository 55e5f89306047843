"""Which model answers inline completions, and how: a FIM template, the server's own FIM, the chat fallback, or
none (with the reason, said once)."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_agent.agent.repair.line_infill import template_for
from lsp_agent.completion.fim_client import FIM_ENDPOINT_PROVIDERS, provider_of
from lsp_agent.config import Settings


@dataclass(frozen=True)
class CompletionSetup:
    """The resolved completion model: `template` is a FIM template, `server`, `chat`, or None (then `reason`)."""

    model: str | None
    api_base: str | None
    api_key: str | None
    template: str | None
    reason: str | None = None  # why there are no completions (None: switched off, nothing to say)
    loud: bool = False  # say the reason as a message the user sees (they asked for completions explicitly)

    @property
    def enabled(self) -> bool:
        """Whether completions are offered."""
        return self.template is not None


def resolve_setup(settings: Settings) -> CompletionSetup:
    """The completion model of these settings and how it is prompted."""
    model = settings.completion_model or settings.model
    # apiBase and apiKey are the agent model's: they serve a completion model of the same provider (or when the
    # agent has no model of its own)
    same_provider = (
        not settings.completion_model
        or settings.model is None
        or provider_of(settings.completion_model) == provider_of(settings.model)
    )
    api_base = settings.completion_api_base or (settings.api_base if same_provider else None)
    api_key = settings.completion_api_key or (settings.api_key if same_provider else None)
    if settings.inline_completion == "off":
        return CompletionSetup(model, api_base, api_key, None)
    loud = settings.inline_completion == "on"
    if not model:
        reason = "inline completions need a model: set `lspAgent.completionModel` (or `model`)"
        return CompletionSetup(None, api_base, api_key, None, reason, loud)
    template = settings.completion_template
    if template == "auto":
        template = (
            "server"
            if provider_of(model) in FIM_ENDPOINT_PROVIDERS
            else template_for(settings.infill_template, model)
        )
    if template is None and settings.completion_chat_fallback:
        template = "chat"
    if template is None:
        reason = (
            f"inline completions are off: {model} is not known as a fill-in-the-middle model. Set "
            "`lspAgent.completionModel` to one (e.g. openai/qwen2.5-coder-1.5b at a llama.cpp server), "
            "`completionTemplate` for a model not known by name, or `completionChatFallback` to ask the chat model"
        )
        return CompletionSetup(model, api_base, api_key, None, reason, loud)
    return CompletionSetup(model, api_base, api_key, template)
