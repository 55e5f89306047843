"""An HTTP client of one text completion's own, closed after it.

litellm's text completions through its OpenAI provider open a client per request and never close it
(BerriAI/litellm#17676), so every infill request logged 'Unclosed connector' errors in the user's terminal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

# litellm's providers whose text completions it sends, through that handler, to an OpenAI-compatible
# /v1/completions with the prompt as written (lm_studio's and ollama's wrap it in a chat)
TEXT_PROVIDERS = ("openai", "text-completion-openai", "hosted_vllm", "llamafile")


def sends_prompt_as_written(model: str) -> bool:
    """Whether litellm sends this model's text completions, prompt as written, through its OpenAI handler."""
    return model.split("/", 1)[0] in TEXT_PROVIDERS


@asynccontextmanager
async def own_text_client(
    model: str, api_key: str | None, api_base: str | None
) -> AsyncIterator[dict[str, Any]]:
    """The parameters that give the request an OpenAI client of its own (none for other providers), closed on
    leaving; litellm's own retries stay off (the model client retries)."""
    if not sends_prompt_as_written(model):
        yield {}
        return
    from openai import AsyncOpenAI  # litellm's own dependency, which it sends these requests through

    async with AsyncOpenAI(api_key=api_key or "none", base_url=api_base, max_retries=0) as client:
        yield {"client": client}
