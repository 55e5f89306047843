"""Streamed text completions for inline suggestions, whose HTTP stream is closed the moment they are dropped.

An OpenAI-compatible server (llama.cpp, vLLM, llamafile, Ollama's /v1) is reached through one long-lived OpenAI
client (keep-alive connections, no litellm on the keystroke path); other providers with a fill-in-the-middle
endpoint of their own (Codestral) go through litellm's text completions, and the chat fallback through its chat
completions. Leaving the `async for` early (the block is complete) or being cancelled (a newer keystroke) closes
the response, so the model server notices the closed connection and stops generating.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.agent.model.text_client import sends_prompt_as_written

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "sk-no-key-required"  # a local server needs none, the OpenAI client insists on one
# litellm providers whose text completions go to a fill-in-the-middle endpoint taking `prompt` and `suffix`
FIM_ENDPOINT_PROVIDERS = ("text-completion-codestral", "text-completion-inception")


class CompletionModelError(Exception):
    """The completion model could not answer (down, refused, timed out); the message says where and why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status of a refusal, when there was one


@dataclass
class FimRequest:
    """One completion request: the prompt as sent, the suffix for servers that take it apart, and limits."""

    prompt: str
    suffix: str | None = None
    messages: list[dict[str, str]] | None = None  # the chat fallback: a chat request instead of a prompt
    max_tokens: int = 128
    temperature: float = 0.0
    stop: list[str] = field(default_factory=list)
    grammar: str | None = None  # a GBNF grammar the reply must follow (llama.cpp's servers)


@dataclass
class FimResult:
    """What came back: the text, why it ended, and the server's own counts when it sent them."""

    text: str = ""
    finish_reason: str | None = None
    stopped_early: bool = False  # we closed the stream: the text so far was enough
    usage: dict[str, Any] = field(default_factory=dict)  # prompt_tokens, completion_tokens (when reported)
    timings: dict[str, Any] = field(default_factory=dict)  # llama.cpp's timings (prompt_n: tokens evaluated)
    seconds: float = 0.0


def provider_of(model: str) -> str:
    """The litellm provider part of a model string ('' when it has none)."""
    return model.split("/", 1)[0] if "/" in model else ""


class FimClient:
    """Sends completion requests to one model; a request's stream is closed when it is cancelled or stopped."""

    def __init__(self, model: str, api_base: str | None, api_key: str | None, timeout: float) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self._openai: Any = None

    @property
    def direct(self) -> bool:
        """Whether requests go straight to an OpenAI-compatible /v1/completions (else through litellm)."""
        return sends_prompt_as_written(self.model)

    async def close(self) -> None:
        """Close the kept-alive connections."""
        if self._openai is not None:
            client, self._openai = self._openai, None
            await client.close()

    async def stream(self, request: FimRequest, on_text: Callable[[str], bool]) -> FimResult:
        """Stream one completion; `on_text(text so far)` returning True stops it (the stream is closed).

        Raises CompletionModelError when the model cannot answer; CancelledError closes the stream and goes on."""
        start = time.perf_counter()
        result = FimResult()
        try:
            async with asyncio.timeout(self.timeout):
                if request.messages is not None:
                    await self._chat(request, result, on_text)
                elif self.direct:
                    await self._direct(request, result, on_text)
                else:
                    await self._litellm(request, result, on_text)
        except TimeoutError:
            raise CompletionModelError(
                f"no completion from {self._where()} within {self.timeout:g} s"
            ) from None
        except (asyncio.CancelledError, CompletionModelError):
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of the model is reported the same way
            status = getattr(exc, "status_code", None)
            raise CompletionModelError(f"{self._where()}: {type(exc).__name__}: {exc}", status) from None
        result.seconds = time.perf_counter() - start
        return result

    def _where(self) -> str:
        return f"the completion model {self.model}" + (f" at {self.api_base}" if self.api_base else "")

    async def _client(self) -> Any:
        if self._openai is None:
            key = self.api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
            # importing the library and building the client (its SSL context) take seconds on a busy machine:
            # never on the event loop
            self._openai = await asyncio.to_thread(new_openai_client, key, self.api_base, self.timeout)
        return self._openai

    async def _direct(self, request: FimRequest, result: FimResult, on_text: Callable[[str], bool]) -> None:
        """/v1/completions through the kept OpenAI client. A prompt we format ourselves goes to a local FIM server
        (llama.cpp, llamafile, vLLM): `cache_prompt` asks llama.cpp to reuse its KV cache for the common start."""
        extra: dict[str, Any] = {} if request.suffix is not None else {"cache_prompt": True}
        if request.grammar is not None:
            extra["grammar"] = request.grammar
        client = await self._client()
        stream = await client.completions.create(
            model=self.model.split("/", 1)[1],
            prompt=request.prompt,
            suffix=request.suffix if request.suffix is not None else _omit(),
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            stop=request.stop or _omit(),
            stream=True,
            stream_options={"include_usage": True},
            extra_body=extra,
        )
        async with stream:
            async for chunk in stream:
                _note_extras(chunk, result)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                result.text += choice.text or ""
                result.finish_reason = choice.finish_reason or result.finish_reason
                if choice.text and on_text(result.text):
                    result.stopped_early = True
                    return

    async def _litellm(self, request: FimRequest, result: FimResult, on_text: Callable[[str], bool]) -> None:
        """A provider's own FIM endpoint (Codestral) through litellm's text completions, streamed."""
        litellm = await _litellm()
        params: dict[str, Any] = {"model": self.model, "prompt": request.prompt, "stream": True}
        params.update(max_tokens=request.max_tokens, temperature=request.temperature, max_retries=0)
        if request.suffix is not None:
            params["suffix"] = request.suffix
        if request.stop:
            params["stop"] = request.stop
        if self.api_base:
            params["api_base"] = self.api_base
        if self.api_key:
            params["api_key"] = self.api_key
        response = await litellm.atext_completion(**params)
        await _read_litellm(response, result, on_text, lambda c: (c.get("choices") or [{}])[0].get("text"))

    async def _chat(self, request: FimRequest, result: FimResult, on_text: Callable[[str], bool]) -> None:
        """The chat fallback: the chat model asked for the missing code, streamed."""
        litellm = await _litellm()
        params: dict[str, Any] = {"model": self.model, "messages": request.messages, "stream": True}
        params.update(max_tokens=request.max_tokens, temperature=request.temperature, max_retries=0)
        params.update(drop_params=True)
        if self.api_base:
            params["api_base"] = self.api_base
        if self.api_key:
            params["api_key"] = self.api_key
        response = await litellm.acompletion(**params)

        def delta(chunk: Any) -> str | None:
            choices = chunk.get("choices") or [{}]
            return (choices[0].get("delta") or {}).get("content")

        await _read_litellm(response, result, on_text, delta)


async def _litellm() -> Any:
    """litellm, imported off the event loop the first time (it takes seconds)."""
    from lsp_agent.agent.model.client import get_litellm, litellm_loaded

    return get_litellm() if litellm_loaded() else await asyncio.to_thread(get_litellm)


async def _read_litellm(
    response: Any, result: FimResult, on_text: Callable[[str], bool], text_of: Callable[[Any], str | None]
) -> None:
    """Read a litellm stream into `result`; leaving early closes it where litellm lets us."""
    try:
        async for chunk in response:
            piece = text_of(chunk) or ""
            result.text += piece
            if piece and on_text(result.text):
                result.stopped_early = True
                return
    finally:
        closer = getattr(getattr(response, "completion_stream", None), "aclose", None)
        if closer is not None:
            try:
                await closer()
            except Exception as exc:  # noqa: BLE001 - closing is best effort
                log.debug("closing a litellm stream: %s", exc)


def _note_extras(chunk: Any, result: FimResult) -> None:
    """Keep usage and llama.cpp's timings from whichever chunk carries them."""
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        result.usage = {k: v for k, v in usage.model_dump().items() if isinstance(v, int)}
    extra = getattr(chunk, "model_extra", None) or {}
    if isinstance(extra.get("timings"), dict):
        result.timings = dict(extra["timings"])


def import_openai() -> None:
    """Import the OpenAI client library and what its first streamed completion loads (call from a worker thread:
    it takes a while the first time)."""
    import openai.resources.completions  # noqa: F401
    import openai.types.completion  # noqa: F401
    from openai import AsyncStream  # noqa: F401


def new_openai_client(key: str, api_base: str | None, timeout: float) -> Any:
    """An OpenAI client without retries of its own (call from a worker thread)."""
    import_openai()
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key=key, base_url=api_base, max_retries=0, timeout=timeout)


def _omit() -> Any:
    from openai import omit

    return omit
