"""Conversation memory as prompt text: a summary of the oldest exchanges, the newest in full, within a token budget.

Like a run's context compaction (agent/conversation/compaction.py), a conversation over its budget has its oldest exchanges
folded into a model-written summary (agent/conversation/summary.py). Rendering keeps the newest exchanges' answers
in full, shrinks older ones to a few lines, and replaces what still does not fit (or every exchange when no
summary could be written) by a marker saying how many exchanges were left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MARKER = "[Conversation compacted:"
CONVERSATION_TOKENS = 8000  # prompt budget of the conversation memory
ANSWER_SHARE = 0.5  # one exchange's full text may take at most this share of the budget
SHORT_ANSWER_CHARS = 240
NOTE_CHARS = 600

TokenCount = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """Tokens of a text, estimated at 4 characters per token (the run's counter falls back to the same)."""
    return (len(text) + 3) // 4


@dataclass
class Exchange:
    """One ask of a conversation: the task, the full answer and what became of the proposal."""

    run_id: str
    task: str
    answer: str = ""
    outcome: str = "running"  # running | complete | error | cancelled | max_iterations | ...
    proposed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # applied / rejected (and why) / shown but not applied
    retried: bool = False  # the user discarded this attempt and asked again
    request: dict[str, Any] = field(default_factory=dict)  # the ask as sent (for retry)
    folded: bool = False  # part of the conversation's summary: the prompt shows the summary, not this
    rewound: bool = False  # the conversation was rewound to before it: dropped from the prompt

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the conversation view and the saved session use it)."""
        return {
            "runId": self.run_id,
            "task": self.task,
            "answer": self.answer,
            "outcome": self.outcome,
            "proposed": list(self.proposed),
            "notes": list(self.notes),
            "retried": self.retried,
            "request": dict(self.request),
            "folded": self.folded,
            "rewound": self.rewound,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Exchange | None:
        """Inverse of to_dict; None for entries that are not exchanges."""
        if not isinstance(data, dict) or not isinstance(data.get("runId"), str):
            return None
        request = data.get("request")
        return cls(
            data["runId"],
            str(data.get("task") or ""),
            str(data.get("answer") or ""),
            str(data.get("outcome") or "running"),
            _strings(data.get("proposed")),
            _strings(data.get("notes")),
            bool(data.get("retried")),
            dict(request) if isinstance(request, dict) else {},
            bool(data.get("folded")),
            bool(data.get("rewound")),
        )

    def full_text(self, max_chars: int) -> str:
        """The exchange with its answer in full (cut at max_chars with a marker)."""
        answer = self.answer.strip() or "(no answer)"
        if len(answer) > max_chars:
            answer = answer[:max_chars] + f"\n[answer cut from {len(self.answer)} characters]"
        lines = [f"User (run {self.run_id}): {self.task.strip()}", f"Agent ({self.outcome}): {answer}"]
        return "\n".join(lines + self.tail_lines())

    def short_text(self) -> str:
        """The exchange on a few short lines (older exchanges of a long conversation)."""
        answer = " ".join(self.answer.split())
        if len(answer) > SHORT_ANSWER_CHARS:
            answer = answer[: SHORT_ANSWER_CHARS - 3] + "..."
        return "\n".join(
            [f"User (run {self.run_id}): {_one_line(self.task, 300)}", f"Agent ({self.outcome}): {answer}"]
            + self.tail_lines()
        )

    def tail_lines(self) -> list[str]:
        """Proposed files, what the user did with them, and the retry mark."""
        lines = []
        if self.proposed:
            lines.append("Proposed changes: " + ", ".join(self.proposed))
        lines += [f"Then: {_one_line(note, NOTE_CHARS)}" for note in self.notes]
        if self.retried:
            lines.append("The user discarded this attempt and asked again.")
        return lines


@dataclass
class ConversationSummary:
    """The model-written summary of a conversation's oldest exchanges (it replaces them in the prompt)."""

    text: str
    exchanges: int  # how many exchanges it covers (earlier summaries included)
    model: str = ""
    created: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"text": self.text, "exchanges": self.exchanges, "model": self.model, "created": self.created}

    @classmethod
    def from_dict(cls, data: Any) -> ConversationSummary | None:
        """Inverse of to_dict; None for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("text"), str) or not data["text"].strip():
            return None
        exchanges = data.get("exchanges")
        created = data.get("created")
        return cls(
            data["text"],
            exchanges if isinstance(exchanges, int) else 0,
            str(data.get("model") or ""),
            float(created) if isinstance(created, int | float) else 0.0,
        )

    def prompt_text(self) -> str:
        """The summary as the prompt shows it."""
        return (
            f"Summary of the {self.exchanges} oldest exchanges (written when they were folded):\n{self.text}"
        )


def render_conversation(
    exchanges: Sequence[Exchange],
    notes: Sequence[str] = (),
    *,
    budget: int = CONVERSATION_TOKENS,
    count: TokenCount = estimate_tokens,
    summary: ConversationSummary | None = None,
) -> tuple[str, int]:
    """(prompt text, exchanges left out): the summary, newest exchanges in full, older ones short, the rest a marker."""
    if not exchanges and not notes and summary is None:
        return "", 0
    header = "Earlier in this conversation (oldest first):"
    if summary is not None:
        header += "\n" + summary.prompt_text() + "\n"
    used = count(header) + sum(count(n) for n in notes)
    max_chars = int(budget * ANSWER_SHARE) * 4
    blocks: list[str] = []
    full = True
    omitted = 0
    for exchange in reversed(exchanges):
        text = exchange.full_text(max_chars) if full else exchange.short_text()
        if full and used + count(text) > budget and blocks:
            full = False
            text = exchange.short_text()
        if used + count(text) > budget and blocks:
            omitted = len(exchanges) - len(blocks)
            break
        blocks.append(text)
        used += count(text)
    parts = [header]
    if omitted:
        parts.append(
            f"{MARKER} the {omitted} oldest exchanges were left out to fit the conversation's token budget.]"
        )
    parts += [block + "\n" for block in reversed(blocks)]
    if notes:
        parts.append("Notes: " + "; ".join(_one_line(n, NOTE_CHARS) for n in notes))
    return "\n".join(parts).rstrip(), omitted


def _strings(value: Any) -> list[str]:
    """The strings of a list read from JSON ([] for anything else)."""
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


def _one_line(text: str, limit: int) -> str:
    """Text on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
