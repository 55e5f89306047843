"""The run's side of the model: every request goes through Conversation.complete, with usage accounting,
compaction, and the two fallbacks (a context overflow compacts once; refused native tools move into the prompt)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.agent.conversation.compaction import (
    CompactionReport,
    Compactor,
    TokenCounter,
    render_for_summary,
)
from lsp_agent.agent.model.client import (
    ModelClient,
    ModelError,
    ModelReply,
    context_window,
)
from lsp_agent.agent.model.litellm_loader import get_litellm, litellm_loaded
from lsp_agent.agent.outcome import StopRun

if TYPE_CHECKING:
    from lsp_agent.agent.cancellation import Cancellation
    from lsp_agent.agent.events import RunEvents
    from lsp_agent.config import Settings

Message = dict[str, Any]


@dataclass
class Usage:
    """What a run used so far: model requests (its iterations), tokens, cost, and conversation messages."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    messages: int = 0
    finish_reason: str | None = None  # why the latest reply ended (stop, tool_calls, content_filter...)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


async def connect_model(settings: Settings) -> ModelClient:
    """The model client for the settings; a missing or unusable model ends the run with what to set."""
    try:
        settings.require_model()
        if not litellm_loaded():  # a first import takes seconds: keep the event loop free
            await asyncio.to_thread(get_litellm)
        return ModelClient(settings)
    except Exception as exc:  # ModelNotConfigured and friends
        raise StopRun("error", str(exc)) from None


class Conversation:
    """Conversations with the model for one run: opening them, asking, counting, compacting, falling back."""

    def __init__(
        self,
        client: ModelClient,
        settings: Settings,
        events: RunEvents,
        cancellation: Cancellation,
        usage: Usage,
        *,
        system_for: Callable[[str], str],
        tool_schemas: list[dict[str, Any]] | None,
    ) -> None:
        self.client = client
        self.events = events
        self.cancellation = cancellation
        self.usage = usage
        self.system_for = system_for  # tool mode -> system prompt (the run style writes it)
        self.system = ""
        self.examples: list[Message] = []  # worked-example turns between the system prompt and the task
        counter = TokenCounter(client.model)
        self.compactor = Compactor(
            counter,
            context_window(client.model, settings.context_window),
            settings.compaction_threshold,
            summarizer=self.summarize if settings.compaction_summary else None,
        )
        if client.tool_mode == "native" and tool_schemas:
            self.compactor.reserved = counter.text_tokens(json.dumps(tool_schemas))
        client.on_retry = self._on_retry

    @property
    def model(self) -> str:
        """The model's name."""
        return self.client.model

    @property
    def tool_mode(self) -> str:
        """ "native" or "prompt" (it turns "prompt" when the provider refuses native tools)."""
        return self.client.tool_mode

    def write_system_prompt(self) -> None:
        """(Re)write the system prompt for the current tool mode."""
        self.system = self.system_for(self.client.tool_mode)

    def open(self, user_text: str, *, system: str | None = None) -> list[Message]:
        """A new conversation: a system prompt (the run's by default, then its example turns) and one user message."""
        messages = [
            {"role": "system", "content": self.system if system is None else system},
            *(self.examples if system is None else []),
            {"role": "user", "content": user_text},
        ]
        self.usage.messages += len(messages)
        return messages

    def append(self, messages: list[Message], *new: Message) -> None:
        """Add messages to a conversation (the run counts them)."""
        messages.extend(new)
        self.usage.messages += len(new)

    async def compact_if_needed(self, messages: list[Message]) -> list[Message]:
        """The conversation, compacted when it passed the threshold of the context window."""
        if not self.compactor.needs(messages):
            return messages
        compacted, report = await self.compactor.compact(messages)
        self._report_compaction(report)
        return compacted

    async def complete(
        self,
        messages: list[Message],
        schemas: list[dict[str, Any]] | None = None,
        *,
        step: tuple[int, int] | None = None,
    ) -> ModelReply:
        """One model request, counted; a permanent model error raises StopRun("error"). `step`: (n, of) in a loop.

        Refused native tools switch the run to tools in the prompt (rewriting messages[0]) and ask again; a context
        overflow compacts `messages` in place once and asks again.
        """
        try:
            reply = await self._send(messages, schemas, step)
        except ModelError as exc:
            if exc.kind == "tools_unsupported" and not any(m.get("role") == "tool" for m in messages):
                self._move_tools_into_prompt(messages, str(exc))
                return await self.complete(messages, schemas, step=step)
            if exc.kind != "context" or len(messages) <= 3:
                raise self._fatal(exc) from None
            compacted, report = await self.compactor.compact(messages, force=True)
            self._report_compaction(report)
            messages[:] = compacted
            try:
                reply = await self._send(messages, schemas, step)
            except ModelError as again:
                raise self._fatal(again) from None
        self._account(reply)
        if reply.refused:
            raise StopRun("refusal", refusal_text(reply))
        return reply

    async def infill(self, prompt: str, stop: list[str], *, step: tuple[int, int]) -> ModelReply:
        """One fill-in-the-middle text completion, counted and recorded like a request; a model error is raised
        (recorded first), so that the caller can go on without infill."""
        n, of = step
        messages = [{"role": "user", "content": prompt}]
        number = self.usage.requests + 1
        self.events.emit(
            "request", model=self.client.model, messages=messages, tools=[], number=number, step=n, steps=of
        )
        try:
            reply = await self.cancellation.guard(self.client.infill(prompt, stop))
        except ModelError as exc:
            self.events.emit("model_error", message=str(exc), kind=exc.kind)
            raise
        self._account(reply)
        return reply

    async def score(self, prompt: str) -> ModelReply | None:
        """The prompt's tokens' log-probabilities (`reply.logprobs`), or None when the server would not give them;
        its tokens count in the run's usage, but it is no request of the conversation (no request event: a
        replayed run's recorded replies are not shifted by it)."""
        try:
            reply = await self.cancellation.guard(self.client.infill(prompt, [], score=True))
        except ModelError:
            return None  # the caller says so: no likelihood
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        self.usage.cost += reply.cost
        return reply

    async def _send(
        self,
        messages: list[Message],
        schemas: list[dict[str, Any]] | None,
        step: tuple[int, int] | None = None,
    ) -> ModelReply:
        """The request itself, cancellable; a loop step's text streams to a sink that wants it (`text_delta`)."""
        names = [s["function"]["name"] for s in schemas or []]
        n, of = step or (0, 0)
        number = self.usage.requests + 1
        self.events.emit(
            "request",
            model=self.client.model,
            messages=messages,
            tools=names,
            number=number,
            step=n,
            steps=of,
        )
        on_text = None
        if step is not None and self.events.stream_text:  # side requests (plans, summaries) do not stream

            def on_text(text: str) -> None:
                self.events.emit("text_delta", text=text, request=number)

        return await self.cancellation.guard(self.client.complete(messages, schemas, on_text))

    def _fatal(self, exc: ModelError) -> StopRun:
        """Record a model error that ends the run."""
        self.events.emit("model_error", message=str(exc), kind=exc.kind)
        return StopRun("error", str(exc))

    def _move_tools_into_prompt(self, messages: list[Message], why: str) -> None:
        """The provider refused native tools: describe them in the system prompt instead."""
        self.events.emit("error", message=why, kind="tools_unsupported")
        self.compactor.reserved = 0  # the tools now travel in the system prompt, which is counted
        self.write_system_prompt()
        if messages and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": self.system}

    def _account(self, reply: ModelReply) -> None:
        """Add a reply's usage to the run's totals and report it (the reply itself goes to the records)."""
        usage = self.usage
        usage.requests += 1
        usage.prompt_tokens += reply.prompt_tokens
        usage.completion_tokens += reply.completion_tokens
        usage.cost += reply.cost
        usage.finish_reason = reply.finish_reason
        record = {
            "content": reply.content,
            "tool_calls": reply.message.get("tool_calls"),
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "cost": reply.cost,
            "seconds": round(reply.seconds, 4),
            "attempts": reply.attempts,
            "usage_estimated": reply.usage_estimated,
            "finish_reason": reply.finish_reason,
        }
        self.events.emit(
            "usage",
            detail=record,
            iteration=usage.requests,
            promptTokens=usage.prompt_tokens,
            completionTokens=usage.completion_tokens,
            totalTokens=usage.total_tokens,
            cost=usage.cost,
            estimated=reply.usage_estimated,
            contextTokens=reply.prompt_tokens + reply.completion_tokens,  # what the conversation fills now
            contextWindow=self.compactor.window,
        )

    def _report_compaction(self, report: CompactionReport) -> None:
        """Report a compaction."""
        self.events.emit(
            "compaction",
            before=report.before,
            after=report.after,
            removed=report.removed,
            truncated=report.truncated,
            summarized=report.summarized,
            window=self.compactor.window,
        )

    async def summarize(
        self, middle: list[Message], request_for: Callable[[str], str] = prompts.compaction_summary_request
    ) -> str:
        """A model-written summary of messages (compaction's removed middle, a conversation's oldest exchanges).

        One request without tools, bounded by maxTokens like every request of the run; a permanent model error
        raises StopRun("error") as complete() does.
        """
        request = [{"role": "user", "content": request_for(render_for_summary(middle))}]
        reply = await self.complete(request, None)
        return reply.content

    def _on_retry(self, attempt: int, delay: float, message: str) -> None:
        """Report a transient model failure that will be retried."""
        self.events.emit(
            "error",
            message=f"{message} (retry {attempt} in {delay:.1f}s)",
            kind="transient",
            retrying=True,
            reason=message,
            attempt=attempt,
            delay=round(delay, 3),
        )


def refusal_text(reply: ModelReply) -> str:
    """What to tell the user when the provider refused: its own words, else what stopped the reply."""
    if reply.refusal:
        return reply.refusal
    why = "its content filter stopped the reply" if reply.finish_reason == "content_filter" else "it refused"
    return f"The model declined to answer: {why}." + (
        f" Partial reply: {reply.content}" if reply.content else ""
    )
