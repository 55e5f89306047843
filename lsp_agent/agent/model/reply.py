"""Reading a provider's response into a ModelReply: checked, cleaned of lone surrogates, depth-limited arguments."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsp_agent.agent.model.errors import ModelError
from lsp_agent.agent.model.parsing import ToolCall
from lsp_agent.agent.model.sanitize import MAX_ARGUMENT_DEPTH, clean_text, clean_value, nesting_depth
from lsp_agent.agent.model.stream_reply import assemble_stream


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
    refusal: str | None = None  # the provider's explicit refusal text (OpenAI's `refusal` field)
    logprobs: Any = (
        None  # a text completion's `logprobs` as the server sent it (asked for when scoring a prompt)
    )

    @property
    def refused(self) -> bool:
        """True when the provider refused to answer (an explicit refusal, or its content filter stopped the reply)."""
        return bool(self.refusal) or self.finish_reason == "content_filter"

    def close_action(self, content: str) -> None:
        """Use `content` (the text with the closing tag a stop sequence cut off put back) here and in the history."""
        if content != self.content and not self.tool_calls:
            self.content = content
            self.message["content"] = content


async def read_stream(
    litellm: Any, params: dict[str, Any], on_text: Callable[[str], None] | None = None
) -> Any:
    """A streamed completion gathered into one response (`on_text` gets each text delta as it arrives); the
    connection is closed however it ends."""
    stream = await litellm.acompletion(**params)
    chunks: list[Any] = []
    finished = False
    try:
        async for chunk in stream:
            chunks.append(chunk)
            if chunk.choices and chunk.choices[0].finish_reason:
                finished = True
            if on_text is not None and chunk.choices and (text := chunk.choices[0].delta.content):
                on_text(text)
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    where = params.get("api_base") or "the provider"
    if not any(_carries_reply(chunk) for chunk in chunks):
        raise ModelError(
            f"the model server at {where} sent a reply that is not a valid chat completion (an empty or "
            "unreadable event stream). Check that --api-base points at an OpenAI-compatible endpoint "
            "(usually ending in /v1).",
            kind="malformed",
        )
    if getattr(stream, "received_finish_reason", "") is None:
        finished = False  # litellm closes a cut-off stream with a made-up finish reason
    if not finished:
        raise ModelError(
            f"the reply stream from the model server at {where} ended before the reply was complete",
            kind="dropped",
            transient=True,
        )
    return assemble_stream(litellm, chunks)


def _carries_reply(chunk: Any) -> bool:
    """True for a stream chunk with a role, text, tool calls or usage (litellm makes up empty ones)."""
    if getattr(chunk, "usage", None):
        return True
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None and (delta.role or delta.content or delta.tool_calls):
            return True
    return False


def reply_from_response(response: Any) -> ModelReply:
    """A ModelReply from a litellm ModelResponse; a response without the expected shape is a permanent error."""
    if not getattr(response, "choices", None):
        raise ModelError("the model returned no choices", kind="empty", transient=True)
    try:
        choice = response.choices[0]
        msg = choice.message
        content = clean_text(msg.content or "") if isinstance(msg.content or "", str) else str(msg.content)
        calls, raw_calls = _tool_calls(getattr(msg, "tool_calls", None) or [])
        finish_reason = choice.finish_reason
        refusal = _refusal_of(msg)
    except (AttributeError, TypeError, IndexError, KeyError) as exc:
        raise ModelError(
            f"the model server sent a reply without the usual chat-completion fields ({type(exc).__name__}: {exc})",
            kind="malformed",
        ) from None
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if raw_calls:
        message["tool_calls"] = raw_calls
    else:
        message["content"] = content
    usage = getattr(response, "usage", None)
    return ModelReply(
        content=content,
        tool_calls=calls,
        message=message,
        prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
        finish_reason=finish_reason,
        refusal=clean_text(refusal) if isinstance(refusal, str) and refusal.strip() else None,
    )


def _refusal_of(message: Any) -> Any:
    """OpenAI's explicit refusal text (litellm keeps it as `refusal` or among the provider-specific fields).

    Other providers' refusals (Anthropic's "refusal", Gemini's safety stops) arrive as finish reason content_filter.
    """
    refusal = getattr(message, "refusal", None)
    if refusal is None:
        refusal = (getattr(message, "provider_specific_fields", None) or {}).get("refusal")
    return refusal


def _tool_calls(items: list[Any]) -> tuple[list[ToolCall], list[dict[str, Any]]]:
    """Tool calls for the loop and the same calls as they go back into the conversation."""
    calls: list[ToolCall] = []
    raw_calls: list[dict[str, Any]] = []
    for tc in items:
        fn = tc.function
        name = clean_text(str(getattr(fn, "name", None) or ""))
        call_id = clean_text(str(getattr(tc, "id", None) or f"call_{uuid.uuid4().hex[:12]}"))
        raw_args = getattr(fn, "arguments", None)
        raw_args = clean_text(raw_args if isinstance(raw_args, str) else json.dumps(raw_args or {}))
        arguments, problem = decode_arguments(raw_args)
        calls.append(ToolCall(name=name, arguments=arguments, id=call_id, problem=problem))
        raw_calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw_args}}
        )
    return calls, raw_calls


def decode_arguments(raw: Any) -> tuple[dict[str, Any] | str, str | None]:
    """(arguments, problem): a dict, or the raw string when it is not a JSON object; a problem when too deep."""
    if isinstance(raw, dict):
        value: Any = raw
    elif not isinstance(raw, str) or not raw.strip():
        return {}, None
    else:
        try:
            value = json.loads(raw, strict=False)
        except (ValueError, RecursionError):
            return raw, None
    if not isinstance(value, dict):
        return raw, None
    depth = nesting_depth(value)
    if depth > MAX_ARGUMENT_DEPTH:
        return _preview(raw), (
            f"the arguments nest more than {MAX_ARGUMENT_DEPTH} levels deep; no tool takes that, "
            "send a flat JSON object of the tool's parameters"
        )
    return clean_value(value), None


def _preview(raw: Any, limit: int = 200) -> str:
    """The start of over-deep raw arguments, kept as a string (a string serialises at any depth)."""
    text = raw if isinstance(raw, str) else json.dumps(raw)[:limit]
    return text if len(text) <= limit else text[:limit] + "..."


def _count(value: Any) -> int:
    """A token count from a usage field (0 for anything that is not a number)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def reply_from_text(response: Any) -> ModelReply:
    """A ModelReply from a litellm TextCompletionResponse (a fill-in-the-middle completion: text only)."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise ModelError("the model returned no choices", kind="empty", transient=True)
    text = getattr(choices[0], "text", None)
    text = clean_text(text) if isinstance(text, str) else ""
    usage = getattr(response, "usage", None)
    return ModelReply(
        content=text,
        tool_calls=[],
        message={"role": "assistant", "content": text},
        prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
        finish_reason=getattr(choices[0], "finish_reason", None),
        logprobs=getattr(choices[0], "logprobs", None),
    )
