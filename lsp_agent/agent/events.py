"""Typed events a run emits, and the channel that hands each one to every sink (front-end, transcript, log)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

EVENT_KINDS = (
    "start",
    "thought",
    "tool_call",
    "tool_result",
    "plan",
    "subtask",
    "compaction",
    "usage",
    "permission",
    "error",
    "proposal",
    "done",
    "context",
)
# Facts only the run's records (transcript, log) take: front-ends never see them.
TRACE_KINDS = ("request", "model_error")
# The model's text as it streams and an exec tool's output while it runs: only for a sink that asked for them
# (RunEvents.stream_text, stream_output), never recorded (the transcript and the log keep each reply whole, from its
# `usage` event, and each tool's output from its `tool_result`).
STREAM_KINDS = ("text_delta", "tool_output")

log = logging.getLogger(__name__)


@dataclass
class AgentEvent:
    """One thing that happened in a run: `data` is what front-ends show; `detail` the long form records keep."""

    kind: str
    run_id: str
    data: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)
    detail: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS and self.kind not in TRACE_KINDS and self.kind not in STREAM_KINDS:
            raise ValueError(f"unknown event kind {self.kind!r}; expected one of {', '.join(EVENT_KINDS)}")

    @property
    def public(self) -> bool:
        """True for the kinds front-ends receive (not the run's own trace records)."""
        return self.kind in EVENT_KINDS or self.kind in STREAM_KINDS

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready dict: {"runId", "kind", **data}."""
        return {"runId": self.run_id, "kind": self.kind, **self.data}

    def to_text(self) -> str:
        """A compact one-line (or few-line) human description."""
        d = self.data
        k = self.kind
        if k == "start":
            return f"task: {d.get('task', '')} (model {d.get('model')}, tool calling {d.get('toolCalling')})"
        if k == "thought":
            return f"thought: {d.get('text', '').strip()}"
        if k == "tool_call":
            return f"-> {d.get('name')}({_short_args(d.get('arguments'))})"
        if k == "tool_result":
            status = "ok" if d.get("ok") else "failed"
            return f"<- {d.get('name')} {status} in {d.get('seconds', 0):.2f}s: {_first_lines(d.get('output', ''))}"
        if k == "plan":
            lines = [f"plan ({len(d.get('subtasks', []))} subtasks):"]
            for t in d.get("subtasks", []):
                deps = (
                    f" after {', '.join(map(str, t.get('dependencies') or []))}"
                    if t.get("dependencies")
                    else ""
                )
                lines.append(f"  {t.get('id')}. {t.get('description')}{deps}")
            if d.get("fallback"):
                lines.append(f"  (fallback: {d['fallback']})")
            return "\n".join(lines)
        if k == "subtask":
            return f"subtask {d.get('id')} {d.get('status')}: {d.get('description', '')}"
        if k == "compaction":
            return (
                f"compacted context: {d.get('before')} -> {d.get('after')} tokens "
                f"({d.get('removed', 0)} messages removed, {d.get('truncated', 0)} outputs cut)"
            )
        if k == "usage":
            return f"tokens: {d.get('promptTokens', 0)} in / {d.get('completionTokens', 0)} out, cost ${d.get('cost', 0):.4f}"
        if k == "permission":
            return f"permission for {d.get('tool')}: {d.get('decision')} ({d.get('reason', '')})"
        if k == "error":
            return f"error: {d.get('message')}"
        if k == "proposal":
            return f"proposal: {len(d.get('changes', []))} file(s) changed"
        if k == "done":
            return f"done: {d.get('stopReason')} after {d.get('iterations')} iterations"
        if k == "context":
            return context_text(d)
        return f"{k}: {json.dumps(d, default=str)[:200]}"


EventSink = Callable[[AgentEvent], None]


def context_text(d: dict[str, Any]) -> str:
    """A `context` event (project rules loaded, folders opened for reading, the conversation summarized, mentions
    attached) as one line."""
    if d.get("what") in ("rules", "folders", "conversation", "alternatives"):
        return str(d.get("status") or "project rules")
    attached = ", ".join(map(str, d.get("attached") or [])) or "nothing"
    problems = "".join(f"; {p}" for p in d.get("problems") or [])
    return f"context: attached {attached}{problems}"


class RunEvents:
    """The run's one channel: each fact is emitted once and reaches the front-end's sink, then the recorders."""

    def __init__(self, run_id: str, sink: EventSink | None, recorders: list[EventSink]) -> None:
        self.run_id = run_id
        self.sink = sink
        self.recorders = recorders  # the transcript and the log: they see trace kinds and details too
        self.stream_text = False  # the sink wants `text_delta` events (the model's text as it streams)
        self.stream_output = (
            False  # the sink wants `tool_output` events (an exec tool's output while it runs)
        )

    def emit(self, kind: str, /, *, detail: dict[str, Any] | None = None, **data: Any) -> None:
        """Send one event; a failing sink is logged, never fatal."""
        event = AgentEvent(kind, self.run_id, data, detail=detail or {})
        if self.sink is not None and event.public:
            _deliver(self.sink, event)
        if kind in STREAM_KINDS:
            return
        for recorder in self.recorders:
            _deliver(recorder, event)


def _deliver(sink: EventSink, event: AgentEvent) -> None:
    """Call one sink; its failure is logged (the sink belongs to someone else)."""
    try:
        sink(event)
    except Exception:  # noqa: BLE001 - a sink must not end the run
        log.exception("event sink failed on %s", event.kind)


def _short_args(args: Any, limit: int = 120) -> str:
    """Arguments as `k=v, ...` cut to `limit` characters."""
    if isinstance(args, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in args.items())
    else:
        text = str(args)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_lines(text: str, lines: int = 3, width: int = 160) -> str:
    """The first few lines of a tool output, each cut to `width`, with a count of what was left out."""
    parts = text.splitlines() or [""]
    shown = [p if len(p) <= width else p[: width - 3] + "..." for p in parts[:lines]]
    more = len(parts) - lines
    out = "\n   ".join(shown)
    return out + (f"\n   ... ({more} more lines)" if more > 0 else "")
