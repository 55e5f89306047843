"""A streamed reply's chunks gathered into one chat completion in a single pass.

litellm's `stream_chunk_builder` also re-counts usage, prices the reply and copies every chunk: about 2 ms of CPU
per reply here, paid again on top of litellm's own end-of-stream logging. The agent needs only the text, the tool
calls, the finish reason and the usage the server sent.
"""

from __future__ import annotations

from typing import Any


def assemble_stream(litellm: Any, chunks: list[Any]) -> Any:
    """One litellm ModelResponse from a stream's chunks: text, reasoning, tool calls by index, finish reason, usage."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish_reason: str | None = None
    usage = None
    for chunk in chunks:
        usage = getattr(chunk, "usage", None) or usage
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0):  # one reply is asked for; other choices are not ours
                continue
            finish_reason = choice.finish_reason or finish_reason
            delta = choice.delta
            if delta is None:
                continue
            if delta.content:
                text.append(delta.content)
            if getattr(delta, "reasoning_content", None):
                reasoning.append(delta.reasoning_content)
            for part in delta.tool_calls or []:
                _add_call_part(calls, part)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    first = chunks[0]
    return litellm.ModelResponse(
        id=getattr(first, "id", None),
        created=getattr(first, "created", None),
        model=getattr(first, "model", None),
        choices=[{"index": 0, "finish_reason": finish_reason or "stop", "message": message}],
        usage=usage,
    )


def _add_call_part(calls: dict[int, dict[str, Any]], part: Any) -> None:
    """Fold one tool-call delta into the call of its index (id and name as last sent, arguments appended)."""
    function = getattr(part, "function", None)
    if function is None:
        return
    call = calls.setdefault(
        getattr(part, "index", None) or 0,
        {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
    )
    call["id"] = getattr(part, "id", None) or call["id"]
    call["function"]["name"] = getattr(function, "name", None) or call["function"]["name"]
    call["function"]["arguments"] += getattr(function, "arguments", None) or ""
