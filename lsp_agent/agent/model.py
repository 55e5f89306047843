"""The model adapter: litellm chat completions with native or prompt-injected tool calling, retries and cost."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.parsing import ToolCall

if TYPE_CHECKING:
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

# Model-name fragments of families served without native tool calling or without a system role.
NO_NATIVE_TOOLS = ("gemma", "deepseek-r1", "deepseek-reasoner", "phi-2", "tinyllama")
NO_SYSTEM_ROLE = ("gemma",)
DEFAULT_CONTEXT_WINDOW = 32_768
# Provider errors that mean "no system role for this model".
SYSTEM_REJECTED = re.compile(
    r"developer instruction|system (role|message|prompt|instruction)s? (is |are )?not (supported|enabled|allowed)"
    r"|(does not|doesn't) support (the )?system|role\W+system\W+(is )?not (supported|allowed)",
    re.I,
)

_litellm: Any = None


def get_litellm() -> Any:
    """Import litellm once, with the remote price-map fetch off and its banners quiet."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        # Token counts for compaction use tiktoken; never download Hugging Face tokenizers from an editor.
        litellm.disable_hf_tokenizer_download = True
        _litellm = litellm
    return _litellm


class ModelError(Exception):
    """A model request that failed for good; the message says what to do."""

    def __init__(self, message: str, *, kind: str = "error", transient: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.transient = transient


@dataclass
class ModelReply:
    """One assistant reply: its text, tool calls, the message to keep in history, usage and cost."""

    content: str
    tool_calls: list[ToolCall]
    message: dict[str, Any]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
    usage_estimated: bool = False  # the provider sent no usage: tokens counted locally


def model_cost_entry(model: str) -> dict[str, Any] | None:
    """litellm's local capability/price entry for a model string, without any network lookup."""
    table = get_litellm().model_cost
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
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
    """Calls the configured model through litellm; retries transient failures with exponential backoff."""

    settings: Settings
    max_retries: int = 4
    retry_base: float = 1.0
    retry_cap: float = 30.0
    stream: bool = False
    on_retry: Callable[[int, float, str], None] | None = None
    extra_params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = self.settings.require_model()
        self.tool_mode = resolve_tool_calling(self.model, self.settings.tool_calling)
        self.merge_system = resolve_merge_system(self.model, self.settings.merge_system_prompt)

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelReply:
        """One chat completion (tools only in native mode), retried on transient errors; raises ModelError."""
        litellm = get_litellm()
        params = self._params(messages, tools)
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                reply = await self._once(litellm, params)
                reply.seconds = time.perf_counter() - start
                reply.attempts = attempt
                return reply
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                error = classify_error(exc, self.model)
                retry_after = _retry_after(exc)
            if self._system_rejected(error, params):
                # e.g. Gemma on Google AI Studio: "Developer instruction is not enabled"; fold it into the task
                log.warning(
                    "%s refused the system role (%s); merging it into the first user message",
                    self.model,
                    error,
                )
                self.merge_system = True
                params = self._params(messages, tools)
                continue
            if self._tools_rejected(error, params):
                self.tool_mode = "prompt"
                raise ModelError(
                    f"{self.model} does not accept native tool calls ({error}); switching to prompt-injected tools",
                    kind="tools_unsupported",
                )
            if not error.transient or attempt > self.max_retries:
                if error.transient:
                    raise ModelError(
                        f"model request failed after {attempt} attempts: {error}", kind=error.kind
                    ) from None
                raise error
            delay = min(self.retry_cap, self.retry_base * 2 ** (attempt - 1))
            delay += random.uniform(0, delay / 10)
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.retry_cap))
            log.warning(
                "model request failed (%s), retry %d/%d in %.2fs", error, attempt, self.max_retries, delay
            )
            if self.on_retry is not None:
                self.on_retry(attempt, delay, str(error))
            await asyncio.sleep(delay)

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
        }
        if self.settings.api_base:
            params["api_base"] = self.settings.api_base
        if self.settings.api_key:
            params["api_key"] = self.settings.api_key
        if tools and self.tool_mode == "native":
            params["tools"] = tools
        if self.stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        params.update(self.extra_params)
        return params

    async def _once(self, litellm: Any, params: dict[str, Any]) -> ModelReply:
        """A single request, streamed or not."""
        if params.get("stream"):
            stream = await litellm.acompletion(**params)
            chunks = []
            finished = False
            async for chunk in stream:
                chunks.append(chunk)
                if chunk.choices and chunk.choices[0].finish_reason:
                    finished = True
            if getattr(stream, "received_finish_reason", "") is None:
                finished = False  # litellm closes a cut-off stream with a made-up finish reason
            if not finished:
                raise ModelError(
                    "the model's reply stream ended early", kind="dropped_stream", transient=True
                )
            response = litellm.stream_chunk_builder(chunks, messages=params["messages"])
        else:
            response = await litellm.acompletion(**params)
        reply = self._reply(litellm, response)
        if not reply.prompt_tokens and not reply.completion_tokens:
            self._estimate_usage(litellm, reply, params["messages"])
        return reply

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

    def _reply(self, litellm: Any, response: Any) -> ModelReply:
        """A ModelReply from a litellm ModelResponse."""
        if not getattr(response, "choices", None):
            raise ModelError("the model returned no choices", kind="empty", transient=True)
        choice = response.choices[0]
        msg = choice.message
        content = msg.content or ""
        calls: list[ToolCall] = []
        raw_calls: list[dict[str, Any]] = []
        for tc in getattr(msg, "tool_calls", None) or []:
            fn = tc.function
            call_id = tc.id or f"call_{uuid.uuid4().hex[:12]}"
            raw_args = fn.arguments if fn.arguments is not None else "{}"
            calls.append(ToolCall(name=fn.name or "", arguments=_decode_arguments(raw_args), id=call_id))
            raw_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": fn.name or "", "arguments": raw_args},
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if raw_calls:
            message["tool_calls"] = raw_calls
        else:
            message["content"] = content
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return ModelReply(
            content=content,
            tool_calls=calls,
            message=message,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=self._cost(litellm, response),
            finish_reason=choice.finish_reason,
        )

    def _cost(self, litellm: Any, response: Any) -> float:
        """The price of a response in USD, 0.0 when litellm does not know the model."""
        try:
            return float(litellm.completion_cost(completion_response=response, model=self.model) or 0.0)
        except Exception:  # noqa: BLE001 - unknown models have no price
            return 0.0


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header on the error's HTTP response, if there is one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def _decode_arguments(raw: Any) -> dict[str, Any] | str:
    """Tool-call arguments as a dict, or the raw string when it is not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw, strict=False)
    except (ValueError, RecursionError):
        return raw
    return value if isinstance(value, dict) else raw


def classify_error(exc: BaseException, model: str) -> ModelError:
    """A ModelError saying whether the failure is worth retrying and what the user can do."""
    if isinstance(exc, ModelError):
        return exc
    litellm = get_litellm()
    text = _short_message(exc)
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ModelError(
            f"the conversation no longer fits the context window of {model}: {text}", kind="context"
        )
    if isinstance(exc, litellm.AuthenticationError):
        return ModelError(
            f"authentication failed for {model}: {text}. Check the API key (--api-key, LSP_AGENT_API_KEY or the "
            "provider's key variable such as OPENAI_API_KEY / ANTHROPIC_API_KEY).",
            kind="auth",
        )
    if isinstance(exc, litellm.PermissionDeniedError):
        return ModelError(f"the provider refused access to {model}: {text}", kind="auth")
    if isinstance(exc, litellm.NotFoundError):
        return ModelError(
            f"model {model} was not found: {text}. Check the model name and --api-base.", kind="model"
        )
    transient_types = (
        litellm.Timeout,
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,
        asyncio.TimeoutError,
        ConnectionError,
    )
    if isinstance(exc, transient_types):
        return ModelError(text, kind="transient", transient=True)
    if isinstance(exc, litellm.BadRequestError):
        if "LLM Provider NOT provided" in str(exc):
            return ModelError(
                f"litellm does not know how to reach {model!r}: prefix the model with its provider, e.g. "
                "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder",
                kind="model",
            )
        return ModelError(f"the provider rejected the request for {model}: {text}", kind="bad_request")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status in (408, 409, 429)):
        return ModelError(text, kind="transient", transient=True)
    if type(exc).__module__.startswith(("httpx", "httpcore", "aiohttp")):
        return ModelError(text, kind="transient", transient=True)
    return ModelError(f"model request failed: {type(exc).__name__}: {text}", kind="error")


def _short_message(exc: BaseException) -> str:
    """An exception's message without litellm's class-name prefixes, cut to a readable length."""
    text = str(exc) or type(exc).__name__
    if "Exception - " in text:
        text = text.split("Exception - ", 1)[1]
    text = re.sub(r"^(litellm\.)?\w+Error: (\w+Error: )?", "", text)
    text = " ".join(text.split())
    return text if len(text) <= 500 else text[:497] + "..."
