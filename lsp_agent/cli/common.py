"""Flags shared by several commands of the `lsp-agent` command line."""

from __future__ import annotations

import argparse

LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]


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
