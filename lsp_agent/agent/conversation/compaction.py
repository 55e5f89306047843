"""Context compaction: keep the conversation under the model's context window without splitting tool turns."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsp_agent.agent.model.litellm_loader import get_litellm
from lsp_agent.agent.model.sanitize import clean_text

log = logging.getLogger(__name__)

MARKER = "[Context compacted:"
Summarizer = Callable[[list[dict[str, Any]]], Awaitable[str]]


class TokenCounter:
    """Token counts per message with litellm's counter, cached so each message is counted once."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._cache: dict[str, int] = {}
        # Messages are never mutated in place, so identity is a safe and cheap first-level key.
        self._by_id: dict[int, tuple[dict[str, Any], int]] = {}
        self._fallback = False

    def text_tokens(self, text: str) -> int:
        """Tokens in a text for this model (about 4 characters per token if the tokenizer is unavailable)."""
        if not text:
            return 0
        # a lone surrogate (from a file name, say) cannot be encoded for the tokenizer
        text = clean_text(text)
        if not self._fallback:
            try:
                return int(get_litellm().token_counter(model=self.model, text=text))
            except Exception as exc:  # noqa: BLE001 - tokenizers may be missing offline
                log.info("token counter unavailable for %s (%s); estimating", self.model, exc)
                self._fallback = True
        return max(1, len(text) // 4)

    def message_tokens(self, message: dict[str, Any]) -> int:
        """Tokens of one chat message including its tool calls and a small per-message overhead."""
        known = self._by_id.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = self._content_tokens(message)
        self._by_id[id(message)] = (message, tokens)
        return tokens

    def _content_tokens(self, message: dict[str, Any]) -> int:
        """Tokens of a message by its content (cached by content hash)."""
        content = message.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str) if content else ""
        calls = message.get("tool_calls")
        text = clean_text(content + (json.dumps(calls, ensure_ascii=False) if calls else ""))
        key = hashlib.blake2b(f"{message.get('role')}\0{text}".encode(), digest_size=16).hexdigest()
        cached = self._cache.get(key)
        if cached is None:
            cached = self.text_tokens(text) + 4
            self._cache[key] = cached
        return cached

    def count(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of a whole conversation."""
        return sum(self.message_tokens(m) for m in messages) + 3


@dataclass
class CompactionReport:
    """What a compaction did."""

    before: int
    after: int
    removed: int
    truncated: int
    summarized: bool


class Compactor:
    """Past `threshold` of the window: cut oversized outputs, then replace the middle of the conversation."""

    def __init__(
        self,
        counter: TokenCounter,
        window: int,
        threshold: float = 0.8,
        *,
        target: float = 0.5,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.counter = counter
        self.window = window
        self.threshold = threshold
        self.target = min(target, threshold * 0.75)
        self.summarizer = summarizer
        self.reserved = 0  # tokens every request carries besides the messages (native tool schemas)
        self.removed_total = 0
        self.summaries: list[str] = []

    @property
    def limit(self) -> int:
        """The message token count past which the conversation is compacted."""
        return int(self.window * self.threshold) - self.reserved

    def needs(self, messages: list[dict[str, Any]]) -> bool:
        """True when the conversation (plus the reserved tokens) is over the threshold."""
        return self.counter.count(messages) > self.limit

    async def compact(
        self, messages: list[dict[str, Any]], head: int = 2, *, force: bool = False
    ) -> tuple[list[dict[str, Any]], CompactionReport]:
        """A compacted copy of messages; messages[:head] (system prompt, task) always stay."""
        before = self.counter.count(messages) + self.reserved
        out, truncated = self._cut_outputs(messages, head)
        removed = 0
        summarized = False
        current = self.counter.count(out)
        if force or current > self.limit:
            # Forced (the provider said the conversation is too long): keep at most half of it.
            budget = int(self.window * self.target) - self.reserved
            cut = self._tail_start(out, head, min(budget, current // 2) if force else budget)
            middle = out[head:cut]
            if middle:
                removed = len(middle)
                self.removed_total += removed
                summary = await self._summarize(middle)
                summarized = bool(summary)
                if summary:
                    self.summaries.append(summary)
                out = [*out[: head - 1], self._with_marker(out[head - 1]), *out[cut:]]
        after = self.counter.count(out) + self.reserved
        return out, CompactionReport(before, after, removed, truncated, summarized)

    def _cut_outputs(self, messages: list[dict[str, Any]], head: int) -> tuple[list[dict[str, Any]], int]:
        """Tool outputs above a share of the window cut to that share, with a marker."""
        max_tokens = max(200, int(self.window * 0.15))
        out: list[dict[str, Any]] = []
        cut = 0
        for i, msg in enumerate(messages):
            content = msg.get("content")
            is_output = msg.get("role") == "tool" or (i >= head and msg.get("role") == "user")
            if is_output and isinstance(content, str) and self.counter.message_tokens(msg) > max_tokens:
                keep = max_tokens * 3  # about 3-4 characters per token
                marker = (
                    f"\n[TRUNCATED: output cut from {len(content)} to {keep} characters to fit the context "
                    "window; ask for a narrower range if you need more]"
                )
                msg = {**msg, "content": content[:keep] + marker}
                cut += 1
            out.append(msg)
        return out, cut

    def _tail_start(self, messages: list[dict[str, Any]], head: int, target_tokens: int) -> int:
        """Index of the assistant message starting the recent turns that fit the target (at least one turn)."""
        budget = target_tokens - self.counter.count(messages[:head]) - 200
        starts = [i for i in range(head, len(messages)) if messages[i].get("role") == "assistant"]
        if not starts:
            return head
        chosen = starts[-1]
        for start in reversed(starts):
            if self.counter.count(messages[start:]) > budget:
                break
            chosen = start
        return chosen

    async def _summarize(self, middle: list[dict[str, Any]]) -> str:
        """A model-written summary of the removed messages, or "" (marker only)."""
        if self.summarizer is None:
            return ""
        try:
            return (await self.summarizer(middle)).strip()
        except Exception as exc:  # noqa: BLE001 - a failed summary falls back to the marker
            log.warning("compaction summary failed: %s", exc)
            return ""

    def _with_marker(self, task_message: dict[str, Any]) -> dict[str, Any]:
        """The task message with the compaction note (replacing an earlier one)."""
        content = str(task_message.get("content") or "")
        base = content.split("\n\n" + MARKER, 1)[0]
        note = (
            f"{MARKER} {self.removed_total} earlier messages were removed to fit the context window. Re-read "
            "files if you need their current content.]"
        )
        if self.summaries:
            note += "\nSummary of the removed work:\n" + "\n".join(self.summaries[-5:])
        return {**task_message, "content": f"{base}\n\n{note}"}


def render_for_summary(messages: list[dict[str, Any]], max_chars: int = 2000) -> str:
    """Messages as plain text for a summary request, each cut to max_chars."""
    lines = []
    for msg in messages:
        content = str(msg.get("content") or "")
        if msg.get("tool_calls"):
            calls = ", ".join(
                f"{c['function']['name']}({c['function']['arguments'][:200]})" for c in msg["tool_calls"]
            )
            content = f"{content}\n[tool calls: {calls}]".strip()
        if len(content) > max_chars:
            content = content[:max_chars] + " ..."
        lines.append(f"{msg.get('role')}: {content}")
    return "\n\n".join(lines)
