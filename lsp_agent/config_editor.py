"""Settings of the editor features beside the agent: inline completion and next edits (part of config.Settings)."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_agent.settings_spec import setting
from lsp_agent.settings_values import (
    boolean,
    choice,
    infill_template,
    number_between,
    optional_text,
    positive_int,
    whole_number,
)


@dataclass
class EditorFeatureSettings:
    """Inline completion (docs/completions.md) and next edits (docs/next-edits.md)."""

    inline_completion: str = setting(
        "auto",
        "inlineCompletion",
        "inline completions as you type: on, off, or auto (on when the completion "
        "model takes a fill-in-the-middle prompt)",
        choice(("auto", "on", "off")),
        env="LSP_AGENT_INLINE_COMPLETION",
    )
    completion_model: str | None = setting(
        None,
        "completionModel",
        "litellm model string of inline completions (default: `model`)",
        optional_text,
        env="LSP_AGENT_COMPLETION_MODEL",
    )
    completion_api_base: str | None = setting(
        None,
        "completionApiBase",
        "API base URL of the completion model (default: `apiBase`)",
        optional_text,
        env="LSP_AGENT_COMPLETION_API_BASE",
    )
    completion_api_key: str | None = setting(
        None,
        "completionApiKey",
        "API key of the completion model (default: `apiKey` when it has the agent model's provider)",
        optional_text,
        env="LSP_AGENT_COMPLETION_API_KEY",
    )
    completion_template: str | None = setting(
        "auto",
        "completionTemplate",
        "the completion model's fill-in-the-middle prompt: auto (a provider's own "
        "FIM endpoint, else `infillTemplate`), a preset, a template with {prefix} and {suffix}, or server (send "
        "prompt and suffix apart: Ollama)",
        lambda v: "server" if v == "server" else infill_template(v),
    )
    completion_max_tokens: int = setting(
        128, "completionMaxTokens", "most tokens of one inline completion", positive_int
    )
    completion_temperature: float = setting(
        0.0, "completionTemperature", "sampling temperature of inline completions", number_between(0.0, 2.0)
    )
    completion_debounce_ms: int = setting(
        75,
        "completionDebounceMs",
        "wait this long after a keystroke before asking the model (ms)",
        whole_number,
    )
    completion_context_tokens: int = setting(
        512,
        "completionContextTokens",
        "tokens of repository context in a completion prompt (definitions, "
        "similar code, recent edits; 0: the open file only)",
        whole_number,
    )
    completion_monitor: bool = setting(
        True,
        "completionMonitor",
        "correct a suggestion's `self.x`/`module.x` that the workspace does not define, by asking the model again "
        "restricted to the names that exist (a llama.cpp grammar; off by itself where the server takes none)",
        boolean,
    )
    completion_monitor_corrections: int = setting(
        2, "completionMonitorCorrections", "most names the monitor corrects in one suggestion", whole_number
    )
    completion_chat_fallback: bool = setting(
        False,
        "completionChatFallback",
        "without a fill-in-the-middle model, ask the chat model for inline completions (slower, often worse)",
        boolean,
    )
    next_edits: bool = setting(
        True,
        "nextEdits",
        "after a signature, constructor or attribute change, offer the call sites and uses it implies as a code "
        "action (asks the model; nothing without a model)",
        boolean,
        env="LSP_AGENT_NEXT_EDITS",
    )
    next_edits_max_sites: int = setting(
        20, "nextEditsMaxSites", "next edits: the most sites one change sends to the model", positive_int
    )
