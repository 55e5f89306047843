"""The model adapter: litellm chat completions with native or prompt-injected tool calling, retries and cost."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.model.edit_blocks import close_cut_block
from lsp_agent.agent.model.errors import ModelError, classify_error
from lsp_agent.agent.model.litellm_loader import PLACEHOLDER_KEY, get_litellm, litellm_loaded
from lsp_agent.agent.model.parsing import ACTION_STOP_SEQUENCES, close_cut_action, first_action_only
from lsp_agent.agent.model.reply import ModelReply, read_stream, reply_from_response, reply_from_text
from lsp_agent.agent.model.retry import RetryPolicy, with_retries
from lsp_agent.agent.model.text_client import own_text_client

if TYPE_CHECKING:
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

# Model-name fragments of families served without native tool calling or without a system role.
NO_NATIVE_TOOLS = ("gemma", "deepseek-r1", "deepseek-reasoner", "phi-2", "tinyllama")
NO_SYSTEM_ROLE = ("gemma",)
DEFAULT_CONTEXT_WINDOW = 32_768
SCORED_TOP = 5  # alternatives per token asked for when scoring a prompt (OpenAI allows up to 5)
KEYLESS_PROVIDERS = ("openai", "text-completion-openai", "custom_openai")
# Provider errors that mean "no system role for this model".
SYSTEM_REJECTED = re.compile(
    r"developer instruction|system (role|message|prompt|instruction)s? (is |are )?not (supported|enabled|allowed)"
    r"|(does not|doesn't) support (the )?system|role\W+system\W+(is )?not (supported|allowed)",
    re.I,
)

__all__ = [
    "PLACEHOLDER_KEY",
    "ModelClient",
    "ModelError",
    "ModelReply",
    "classify_error",
    "get_litellm",
    "litellm_loaded",
]


def model_cost_entry(model: str) -> dict[str, Any] | None:
    """litellm's local capability/price entry for a model string, without any network lookup."""
    table = get_litellm().model_cost
    candidates = [model, model.split("/", 1)[1]] if "/" in model else [model]
    for name in candidates:
        entry = table.get(name)
        if isinstance(entry, dict):
            return entry
    return None


def resolve_tool_calling(model: str, override: str = "auto") -> str:
    """native | prompt: the override, else litellm's capability data, else the name, else native."""
    if override in ("native", "prompt"):
        return override
    entry = model_cost_entry(model)
    if entry is not None and entry.get("supports_function_calling") is not None:
        return "native" if entry["supports_function_calling"] else "prompt"
    if any(fragment in model.lower() for fragment in NO_NATIVE_TOOLS):
        return "prompt"
    return "native"


def resolve_merge_system(model: str, setting: str = "auto") -> bool:
    """Whether to fold the system prompt into the first user message: the setting, else litellm's data, else the name."""
    if setting in ("always", "never"):
        return setting == "always"
    entry = model_cost_entry(model)
    if entry is not None and entry.get("supports_system_messages") is not None:
        return not entry["supports_system_messages"]
    return any(fragment in model.lower() for fragment in NO_SYSTEM_ROLE)


def context_window(model: str, configured: int | None = None) -> int:
    """The configured window, else litellm's max input tokens for the model, else a conservative default."""
    if configured:
        return configured
    entry = model_cost_entry(model) or {}
    value = entry.get("max_input_tokens") or entry.get("max_tokens")
    return int(value) if isinstance(value, int) and value > 0 else DEFAULT_CONTEXT_WINDOW


def merge_system_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with every system message folded into the first user message."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for i, msg in enumerate(rest):
        if msg.get("role") == "user":
            rest[i] = {**msg, "content": f"{system}\n\n{msg.get('content') or ''}"}
            return rest
    return [{"role": "user", "content": system}, *rest]


@dataclass
class ModelClient:
    """Calls the configured model through litellm; each attempt is bounded as a whole, transient failures retried."""

    settings: Settings
    max_retries: int = 4
    retry_base: float = 1.0
    retry_cap: float = 30.0
    stream: bool | None = None  # None: the `stream` setting
    on_retry: Callable[[int, float, str], None] | None = None
    extra_params: dict[str, Any] = field(default_factory=dict)
    deadline: float | None = None  # time.monotonic() after which no request or retry starts (the run's limit)
    stop_sequences: tuple[str, ...] = ACTION_STOP_SEQUENCES  # prompt mode: where a reply's first action ends

    def __post_init__(self) -> None:
        self.model = self.settings.require_model()
        self.tool_mode = resolve_tool_calling(self.model, self.settings.tool_calling)
        self.merge_system = resolve_merge_system(self.model, self.settings.merge_system_prompt)
        self.api_key = self._api_key()
        self.stream = self.settings.stream if self.stream is None else self.stream

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One chat completion (tools only in native mode), retried on transient errors; raises ModelError.

        `on_text` gets the reply's text as it streams (the whole text at once when the provider does not stream).
        """
        litellm = get_litellm()
        policy = RetryPolicy(self.max_retries, self.retry_base, self.retry_cap)
        start = time.perf_counter()
        reply, attempts = await with_retries(
            lambda: self._attempt(litellm, messages, tools, on_text),
            policy,
            deadline=self.deadline,
            on_retry=self._report_retry,
        )
        reply.seconds = time.perf_counter() - start
        reply.attempts = attempts
        return reply

    async def infill(self, prompt: str, stop: list[str], *, score: bool = False) -> ModelReply:
        """One fill-in-the-middle text completion (short, so not streamed), retried like a chat; raises ModelError.
        With `score`, the prompt itself is what is asked for: echoed with its tokens' log-probabilities
        (`reply.logprobs`; OpenAI's `echo`, `logprobs`, one token generated since some servers take 0 as no
        limit), tried once."""
        chat = self._params([], None)  # the same endpoint, key, limits and extra parameters, not streamed
        params = {k: v for k, v in chat.items() if k not in ("messages", "stream", "stream_options")}
        params.update(prompt=prompt, stop=stop)
        if score:
            params.update(echo=True, logprobs=SCORED_TOP, max_tokens=1, temperature=0)
            params.pop("stop")
        start = time.perf_counter()

        async def once() -> ModelReply:
            try:
                async with own_text_client(self.model, self.api_key, self.settings.api_base) as client:
                    return await self._bounded(get_litellm(), {**params, **client})
            except ModelError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified here
                raise classify_error(exc, self.model, self.settings.api_base) from None

        policy = RetryPolicy(0 if score else self.max_retries, self.retry_base, self.retry_cap)
        reply, attempts = await with_retries(
            once, policy, deadline=self.deadline, on_retry=self._report_retry
        )
        reply.seconds, reply.attempts = time.perf_counter() - start, attempts
        return reply

    def _report_retry(self, attempt: int, delay: float, error: ModelError) -> None:
        """Log a retry and tell the run (which shows it to the user)."""
        # info, not warning: the run reports the retry as an event, so a terminal shows it once
        log.info("model request failed (%s), retry %d/%d in %.2fs", error, attempt, self.max_retries, delay)
        if self.on_retry is not None:
            self.on_retry(attempt, delay, str(error))

    async def _attempt(
        self,
        litellm: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One request; a refused system role is merged and sent again, refused native tools are reported."""
        params = self._params(messages, tools)
        try:
            return await self._bounded(litellm, params, on_text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            error = classify_error(exc, self.model, self.settings.api_base)
        if self._system_rejected(error, params):
            # e.g. Gemma on Google AI Studio: "Developer instruction is not enabled"; fold it into the task
            log.warning(
                "%s refused the system role (%s); merging it into the first user message", self.model, error
            )
            self.merge_system = True
            return await self._attempt(litellm, messages, tools, on_text)
        if self._tools_rejected(error, params):
            self.tool_mode = "prompt"
            raise ModelError(
                f"{self.model} does not accept native tool calls ({error}); switching to prompt-injected tools",
                kind="tools_unsupported",
            )
        raise error

    async def _bounded(
        self, litellm: Any, params: dict[str, Any], on_text: Callable[[str], None] | None = None
    ) -> ModelReply:
        """The request with a limit on its whole duration (a reply trickling in byte by byte still ends)."""
        limit = self.settings.request_timeout
        if self.deadline is not None:
            limit = min(limit, max(0.0, self.deadline - time.monotonic()))
        try:
            async with asyncio.timeout(limit) as scope:
                return await self._once(litellm, params, on_text)
        except TimeoutError:
            if not scope.expired():
                raise
        where = self.settings.api_base or f"the {self.model.split('/', 1)[0]} API"
        raise ModelError(
            f"the model server at {where} did not finish its reply within {limit:g} s "
            "(raise requestTimeout / --request-timeout for a slow model)",
            kind="timeout",
            transient=True,
        )

    def _system_rejected(self, error: ModelError, params: dict[str, Any]) -> bool:
        """True when the provider refused the system role and the setting lets us merge it (auto)."""
        return (
            self.settings.merge_system_prompt == "auto"
            and not self.merge_system
            and error.kind == "bad_request"
            and any(m.get("role") == "system" for m in params["messages"])
            and SYSTEM_REJECTED.search(str(error)) is not None
        )

    def _tools_rejected(self, error: ModelError, params: dict[str, Any]) -> bool:
        """True when auto mode sent native tools and the provider refused them."""
        return (
            self.settings.tool_calling == "auto"
            and "tools" in params
            and error.kind == "bad_request"
            and ("tool" in str(error).lower() or "function" in str(error).lower())
        )

    def request_params(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of litellm.acompletion for this request (what `complete` sends)."""
        return self._params(messages, tools)

    def _params(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The keyword arguments for litellm.acompletion."""
        if self.merge_system:
            messages = merge_system_messages(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.settings.request_timeout,
            "max_retries": 0,
            "drop_params": True,
            "max_tokens": self.settings.max_tokens,
        }
        if tools is not None and self.tool_mode == "prompt":
            # one action per reply: the server stops at its end instead of inventing the observation
            params["stop"] = list(self.stop_sequences)
        if self.settings.api_base:
            params["api_base"] = self.settings.api_base
        if self.api_key:
            params["api_key"] = self.api_key
        if self.settings.reasoning_effort:  # dropped (drop_params) where the provider takes none
            params["reasoning_effort"] = self.settings.reasoning_effort
        if tools and self.tool_mode == "native":
            params["tools"] = tools
        if self.stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        params.update(self.extra_params)
        return params

    async def _once(
        self, litellm: Any, params: dict[str, Any], on_text: Callable[[str], None] | None = None
    ) -> ModelReply:
        """A single request, streamed or not (a text completion when it has a prompt)."""
        text = "prompt" in params  # a fill-in-the-middle completion: its text as it came
        if text:
            response = await litellm.atext_completion(**params)
        elif params.get("stream"):
            response = await read_stream(litellm, params, on_text)
        else:
            response = await litellm.acompletion(**params)
        reply = reply_from_text(response) if text else reply_from_response(response)
        if on_text is not None and not params.get("stream") and reply.content:
            on_text(reply.content)  # a provider that does not stream: the whole text as one piece
        if "stop" in params and not text:
            # a server that ignores stop sequences still leaves no invented observation in the history
            content = first_action_only(reply.content)
            if reply.finish_reason == "stop":
                content = close_cut_block(close_cut_action(content))
            reply.close_action(content)
        reply.cost = self._cost(litellm, response)
        if not reply.prompt_tokens and not reply.completion_tokens:
            sent = [{"role": "user", "content": params["prompt"]}] if text else params["messages"]
            self._estimate_usage(litellm, reply, sent)
        return reply

    def _api_key(self) -> str | None:
        """The configured key; a placeholder for a keyless OpenAI-compatible server at --api-base."""
        if self.settings.api_key or not self.settings.api_base:
            return self.settings.api_key
        provider = self.model.split("/", 1)[0] if "/" in self.model else ""
        if provider not in KEYLESS_PROVIDERS or os.environ.get("OPENAI_API_KEY") or get_litellm().api_key:
            return None
        log.info("no API key for %s at %s: sending a placeholder key", self.model, self.settings.api_base)
        return PLACEHOLDER_KEY

    def _estimate_usage(self, litellm: Any, reply: ModelReply, messages: list[dict[str, Any]]) -> None:
        """Count tokens (and price them) locally for a provider that reports no usage."""
        try:
            reply.prompt_tokens = int(litellm.token_counter(model=self.model, messages=messages))
            text = reply.content + json.dumps(reply.message.get("tool_calls") or "")
            reply.completion_tokens = int(litellm.token_counter(model=self.model, text=text))
        except Exception as exc:  # noqa: BLE001 - counting is best effort
            log.info("no usage from %s and no local count: %s", self.model, exc)
            return
        reply.usage_estimated = True
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=self.model,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
            )
            reply.cost = float(prompt_cost + completion_cost)
        except Exception:  # noqa: BLE001 - unknown models have no price
            reply.cost = 0.0

    def _cost(self, litellm: Any, response: Any) -> float:
        """The price of a response in USD, 0.0 when litellm does not know the model."""
        try:
            return float(litellm.completion_cost(completion_response=response, model=self.model) or 0.0)
        except Exception:  # noqa: BLE001 - unknown models have no price
            return 0.0
