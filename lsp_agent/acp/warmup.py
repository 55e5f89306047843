"""Warming litellm up in the background at session/new, so a session's first prompt does not pay for it."""

from __future__ import annotations

import logging

from lsp_agent.agent.model.client import PLACEHOLDER_KEY, get_litellm

log = logging.getLogger(__name__)


def warm_up_requests(model: str | None = None) -> None:
    """Import litellm and do the rest of a first real request's one-time work (the tokenizer its cost calculation
    loads, the tool-calling and HTTP modules), seconds under load: for a front-end to call in a worker thread
    while the user is still typing (`lsp-agent acp` at session/new)."""
    litellm = get_litellm()
    tool = {"type": "function", "function": {"name": "warm_up", "parameters": {"type": "object"}}}
    try:
        litellm.token_counter(model=model or "openai/warm-up", text="warm up")
        litellm.completion(
            model="openai/warm-up",
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",  # answered inside litellm: no request is sent
            api_key=PLACEHOLDER_KEY,
            tools=[tool],
        )
    except Exception as exc:  # noqa: BLE001 - only an optimisation
        log.debug("litellm request warm-up failed: %s", exc)
