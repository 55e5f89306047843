"""Flags shared by several commands of the `lsp-agent` command line."""

from __future__ import annotations

import argparse

LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]
# --llm-provider: litellm's prefix and the model used when none of that provider is configured (the key comes from
# the provider's usual variable: ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENAI_API_KEY)
PROVIDERS = {
    "claude": ("anthropic/", "anthropic/claude-sonnet-4-5"),
    "gemini": ("gemini/", "gemini/gemini-2.5-flash"),
    "openai": ("openai/", "openai/gpt-4o-mini"),
}


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that may talk to a model."""
    p.add_argument("--model", help="litellm model string, e.g. openai/gpt-4o-mini (env LSP_AGENT_MODEL)")
    p.add_argument("--api-base", help="API base URL, e.g. http://127.0.0.1:8000/v1 (env LSP_AGENT_API_BASE)")
    p.add_argument("--api-key", help="API key (env LSP_AGENT_API_KEY or the provider's usual variable)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None, help="logging level (default WARNING)")
    p.add_argument("--log-file", help="write logs to this file")


def add_index_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by the commands that build or read the workspace index."""
    p.add_argument("--embeddings", help="embedding backend: none | local | litellm model string")
    p.add_argument("--max-file-size", type=int, help="skip files larger than this many bytes (default 1 MB)")
    p.add_argument(
        "--exclude", action="append", default=[], help="extra gitignore-style pattern (repeatable)"
    )


def add_provider_flag(p: argparse.ArgumentParser) -> None:
    """--llm-provider (seed 004's flag): claude, gemini or openai."""
    p.add_argument(
        "--llm-provider",
        choices=sorted(PROVIDERS),
        help="the model's provider: its default model unless --model (or the configured model) is one of its own",
    )


def provider_model(provider: str | None, flag_model: str | None, configured: str | None) -> str | None:
    """The model --llm-provider asks for: --model (given a bare name, the provider's prefix is added), else the
    configured model when it is the provider's, else the provider's default; ValueError when --model is another
    provider's. None when no provider is given (the configured model stands)."""
    if provider is None:
        return None
    prefix, default = PROVIDERS[provider]
    if flag_model:
        if flag_model.startswith(prefix):
            return flag_model
        if "/" in flag_model:
            raise ValueError(f"--model {flag_model} is not a {provider} model (those start with {prefix})")
        return prefix + flag_model
    return configured if configured and configured.startswith(prefix) else default
