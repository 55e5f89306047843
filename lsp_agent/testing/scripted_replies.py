"""The scripted model's reply bodies: completions, stream chunks, usage, and stop / max_tokens as servers apply them."""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Iterable
from typing import Any

MODEL_ID = "scripted"
EMBEDDING_DIM = 64
CHARS_PER_TOKEN = 4  # the scripted model's token: four characters of text


def hashed_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic bag-of-words vector: each lowercase word adds 1 to the bucket its CRC-32 picks."""
    vec = [0.0] * dim
    for word in text.lower().split():
        word = word.strip(".,:;!?()[]{}\"'`")
        if word:
            vec[zlib.crc32(word.encode()) % dim] += 1.0
    return vec


def text_of(content: Any) -> str:
    """The text of a message's content (a string or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def last_user_or_tool_text(messages: list[dict]) -> str:
    """The text of the last user or tool message (what a step's "match" looks in)."""
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") in ("user", "tool"):
            return text_of(msg.get("content"))
    return ""


def estimate_tokens(text: str) -> int:
    """Tokens of a text for usage figures (at least 1)."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def apply_request_limits(body: dict, step: dict) -> dict:
    """The step as an OpenAI-compatible server would send it for this request.

    The content ends before the first of the request's `stop` strings (which is not sent; finish reason "stop"),
    else after `max_tokens` tokens (finish reason "length"). Tool calls are sent as scripted.
    """
    content = step.get("content")
    if not isinstance(content, str):
        return step
    stops = body.get("stop") or []
    stops = [stops] if isinstance(stops, str) else [s for s in stops if isinstance(s, str) and s]
    cut = min((i for i in (content.find(s) for s in stops) if i >= 0), default=-1)
    if cut >= 0:
        return {**step, "content": content[:cut], "finish_reason": "stop"}
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if isinstance(limit, int) and limit > 0 and len(content) > limit * CHARS_PER_TOKEN:
        return {**step, "content": content[: limit * CHARS_PER_TOKEN], "finish_reason": "length"}
    return step


def tool_calls(step: dict, index: int) -> list[dict]:
    """The step's tool calls in the OpenAI shape, with ids."""
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        args = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{index}_{i}",
                "type": "function",
                "function": {
                    "name": call.get("name", ""),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    return calls


def usage(body: dict, step: dict) -> dict:
    """The step's usage, else counted from the request and the reply."""
    if step.get("usage"):
        counted = dict(step["usage"])
    else:
        prompt = sum(
            estimate_tokens(text_of(m.get("content")))
            for m in body.get("messages") or []
            if isinstance(m, dict)
        )
        completion = estimate_tokens(
            str(step.get("content") or "") + json.dumps(step.get("tool_calls") or [])
        )
        counted = {"prompt_tokens": prompt, "completion_tokens": completion}
    counted.setdefault("prompt_tokens", 0)
    counted.setdefault("completion_tokens", 0)
    counted.setdefault("total_tokens", counted["prompt_tokens"] + counted["completion_tokens"])
    return counted


def finish_reason(step: dict) -> str:
    """The step's finish reason: as scripted, else tool_calls or stop."""
    return step.get("finish_reason") or ("tool_calls" if step.get("tool_calls") else "stop")


def completion(body: dict, step: dict, index: int) -> dict:
    """A whole chat.completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
    calls = tool_calls(step, index)
    if calls:
        message["tool_calls"] = calls
    if step.get("refusal"):
        message["refusal"] = step["refusal"]
    reply = {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(step)}],
        "usage": usage(body, step),
    }
    if step.get("usage") is False:
        del reply["usage"]
    return reply


def text_completion(body: dict, step: dict, index: int) -> dict:
    """A whole text_completion body (/v1/completions: a prompt's continuation, not streamed)."""
    counted = usage({"messages": [{"content": str(body.get("prompt") or "")}]}, step)
    choice = {
        "index": 0,
        "text": step.get("content") or "",
        "logprobs": None,
        "finish_reason": finish_reason(step),
    }
    return {
        "id": f"cmpl-scripted-{index}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
        "choices": [choice],
        "usage": counted,
    }


PROMPT_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")  # a scored prompt's tokens: runs of space, words, punctuation
UNSCORED = -2.0  # the log-probability of a prompt token no scored text covers


def prompt_logprobs(prompt: str, scores: dict[str, float], generated: str = "\n") -> dict:
    """OpenAI's legacy `logprobs` of an echoed prompt and one generated token: each token inside the last place a
    scored text takes in the prompt gets its score, the others UNSCORED, the first none (as servers send it)."""
    tokens = [*PROMPT_TOKEN.findall(prompt), generated]
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    values: list[float | None] = [UNSCORED] * len(tokens)
    for text, score in scores.items():
        at = prompt.rfind(text)
        for i, offset in enumerate(offsets):
            if at >= 0 and at <= offset < at + len(text):
                values[i] = float(score)
    values[0] = None
    tops = [None if v is None else {t: v} for t, v in zip(tokens, values, strict=True)]
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}


def echo_completion(body: dict, logprobs: Any, index: int) -> dict:
    """The reply to a request that scores its prompt (`echo`): the prompt echoed, one token, and `logprobs`."""
    prompt = str(body.get("prompt") or "")
    reply = text_completion(body, {"content": prompt + "\n"}, index)
    reply["choices"][0]["logprobs"] = logprobs
    return reply


def stream_chunks(body: dict, step: dict, index: int) -> Iterable[dict]:
    """The chat.completion.chunk events of a streamed reply (usage last when the request asks for it)."""
    base = {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
    }

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    content = str(step.get("content") or "")
    for start in range(0, len(content), 16):
        yield chunk({"content": content[start : start + 16]})
    if step.get("refusal"):
        yield chunk({"refusal": str(step["refusal"])})
    for i, call in enumerate(tool_calls(step, index)):
        args = call["function"]["arguments"]
        head = {"index": i, "id": call["id"], "type": "function"}
        yield chunk(
            {"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]}
        )
        for start in range(0, len(args), 32):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args[start : start + 32]}}]})
    yield chunk({}, finish_reason(step))
    if (body.get("stream_options") or {}).get("include_usage") and step.get("usage") is not False:
        yield {**base, "choices": [], "usage": usage(body, step)}


TEXT_CHUNK_CHARS = 8  # a streamed text completion sends its text in pieces of two scripted tokens


def text_stream_chunks(body: dict, step: dict, index: int) -> Iterable[dict]:
    """The text_completion events of a streamed /v1/completions reply (llama.cpp's "timings" on the last one
    when the step has them, usage after it when asked)."""
    base = {
        "id": f"cmpl-scripted-{index}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
    }

    def chunk(text: str, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]}

    content = str(step.get("content") or "")
    for start in range(0, len(content), TEXT_CHUNK_CHARS):
        yield chunk(content[start : start + TEXT_CHUNK_CHARS])
    last = chunk("", finish_reason(step))
    if isinstance(step.get("timings"), dict):
        last["timings"] = step["timings"]
    yield last
    if (body.get("stream_options") or {}).get("include_usage") and step.get("usage") is not False:
        prompt = {"messages": [{"content": str(body.get("prompt") or "")}]}
        yield {**base, "choices": [], "usage": usage(prompt, step)}
