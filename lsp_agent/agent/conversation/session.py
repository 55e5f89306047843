"""Session memory: the exchanges of one conversation (tasks, full answers, what the user did), and its permissions."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_agent.agent.consent.permissions import SessionPermissions
from lsp_agent.agent.conversation.memory import (
    CONVERSATION_TOKENS,
    ConversationSummary,
    Exchange,
    TokenCount,
    estimate_tokens,
    render_conversation,
)

MAX_EXCHANGES = 50  # exchanges kept (the prompt shows as many as fit its token budget)
MAX_NOTES = 20  # notes that belong to no exchange of this session
MIN_BUDGET = 1000  # tokens of conversation even a small model's prompt keeps
_RUN_ID = re.compile(r"\brun ([0-9A-Za-z_-]+)")
log = logging.getLogger(__name__)


class Session:
    """One conversation with the agent: its exchanges, loose notes and the permission answers given in it."""

    def __init__(
        self,
        id: str | None = None,  # noqa: A002
        exchanges: list[Exchange] | None = None,
        notes: list[str] | None = None,
        summary: ConversationSummary | None = None,
    ) -> None:
        self.id = id or uuid.uuid4().hex[:12]
        self.exchanges: list[Exchange] = list(exchanges or [])[-MAX_EXCHANGES:]
        self.notes: list[str] = list(notes or [])[-MAX_NOTES:]
        self.summary = summary  # the model-written summary of the folded (oldest) exchanges
        self.root: Path | None = None  # the workspace folder the conversation belongs to (when stored)
        self.on_change: Callable[[Session], None] | None = None  # persists the session (the editor server's)
        self.budget = CONVERSATION_TOKENS
        self.count: TokenCount = estimate_tokens
        self.permissions = (
            SessionPermissions()
        )  # "reject once" and session grants: kept while the session lives

    # ----- recording ------------------------------------------------------------------------------------------

    def begin(self, run_id: str, task: str, request: dict[str, Any] | None = None) -> Exchange:
        """Open the exchange of a run that starts now (its answer comes with record_run)."""
        exchange = self.exchange(run_id)
        if exchange is None:
            exchange = Exchange(run_id, task.strip(), request=dict(request or {}))
            self.exchanges.append(exchange)
            del self.exchanges[:-MAX_EXCHANGES]
            self.changed()
        return exchange

    def record_run(self, run_id: str, task: str, result: Any) -> Exchange:
        """Fill in a finished run's exchange: the answer in full, how it ended, the files it proposed to change."""
        exchange = self.begin(run_id, task)
        exchange.answer = str(getattr(result, "answer", "") or "")
        exchange.outcome = str(getattr(result, "stop_reason", "") or "done")
        proposal = getattr(result, "proposal", None)
        exchange.proposed = list(proposal.paths()) if proposal is not None else []
        self.changed()
        return exchange

    def end(self, run_id: str, outcome: str, error: str = "") -> None:
        """Close an exchange whose run ended without an answer (failed to start, cancelled early)."""
        exchange = self.exchange(run_id)
        if exchange is not None and exchange.outcome == "running":
            exchange.outcome = outcome
            exchange.answer = exchange.answer or (f"(no answer: {error})" if error else "(no answer)")
            self.changed()

    def record(self, text: str) -> None:
        """Remember what happened after an answer ("user applied the proposal of run X"): on run X's exchange."""
        text = " ".join(text.split())[:2000]
        if not text:
            return
        match = _RUN_ID.search(text)
        exchange = self.exchange(match.group(1)) if match else None
        if exchange is not None:
            exchange.notes.append(text)
        else:
            self.notes.append(text)
            del self.notes[:-MAX_NOTES]
        self.changed()

    def mark_retried(self, run_id: str) -> None:
        """The user discarded this exchange's attempt and asked again."""
        exchange = self.exchange(run_id)
        if exchange is not None:
            exchange.retried = True
            self.changed()

    def after(self, number: int) -> list[Exchange]:
        """The exchanges a rewind to exchange `number` (1-based; 0: the start) drops; ValueError saying why not."""
        if not 0 <= number <= len(self.exchanges):
            raise ValueError(
                f"no exchange {number}: this conversation has exchanges 1 to {len(self.exchanges)}"
            )
        if number and self.exchanges[number - 1].rewound:
            raise ValueError(f"exchange {number} was rewound already: pick an exchange that was not")
        if any(e.outcome == "running" for e in self.exchanges[number:]):
            raise ValueError(
                "a run of this conversation is still going: cancel it or wait for it, then rewind"
            )
        return self.exchanges[number:]

    def rewind(self, number: int) -> list[Exchange]:
        """Continue the conversation from exchange `number`: the exchanges after it are marked rewound (left out of
        the prompt); returns them."""
        later = self.after(number)
        for exchange in later:
            exchange.rewound = True
        self.changed()
        return later

    def fold(self, exchanges: list[Exchange], summary: ConversationSummary) -> None:
        """Replace these (oldest) exchanges in the prompt by a summary that covers them and any earlier one."""
        for exchange in exchanges:
            exchange.folded = True
        self.summary = summary
        self.changed()

    def changed(self) -> None:
        """Persist the session, if it is stored (a failing store is logged: the conversation goes on in memory)."""
        if self.on_change is None:
            return
        try:
            self.on_change(self)
        except Exception as exc:  # noqa: BLE001 - a full disk must not end an ask
            log.warning("could not save conversation %s: %s", self.id, exc)

    def fit_to_window(self, window: int) -> None:
        """Budget the conversation at a quarter of the model's context window, at most CONVERSATION_TOKENS."""
        self.budget = max(MIN_BUDGET, min(CONVERSATION_TOKENS, window // 4))

    def clear(self) -> None:
        """Forget every exchange, note and the summary (a new conversation); permission answers stay."""
        self.exchanges.clear()
        self.notes.clear()
        self.summary = None
        self.changed()

    # ----- reading --------------------------------------------------------------------------------------------

    def exchange(self, run_id: str) -> Exchange | None:
        """The exchange of a run, or None."""
        return next((e for e in reversed(self.exchanges) if e.run_id == run_id), None)

    def last(self, *, include_retried: bool = False) -> Exchange | None:
        """The newest exchange (not one the user already retried, unless asked)."""
        return next(
            (e for e in reversed(self.exchanges) if (include_retried or not e.retried) and not e.rewound),
            None,
        )

    def unfolded(self) -> list[Exchange]:
        """The finished exchanges the summary does not cover, oldest first."""
        return [e for e in self.exchanges if e.outcome != "running" and not e.folded and not e.rewound]

    def render(self) -> tuple[str, int]:
        """(prompt text, exchanges left out by the marker): the summary and the unfolded exchanges."""
        return render_conversation(
            self.unfolded(), self.notes, budget=self.budget, count=self.count, summary=self.summary
        )

    def context_text(self) -> str:
        """The earlier exchanges as prompt text within the token budget, or "" when there are none."""
        return self.render()[0]

    # ----- persistence ----------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """JSON-ready form (conversation_store.py writes it)."""
        return {
            "id": self.id,
            "exchanges": [e.to_dict() for e in self.exchanges],
            "notes": list(self.notes),
            "summary": self.summary.to_dict() if self.summary is not None else None,
            "saved": time.time(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Session:
        """Inverse of to_dict; bad entries are dropped (plain strings of older versions become notes)."""
        raw = data.get("exchanges") if isinstance(data.get("exchanges"), list) else []
        loose = data.get("notes") if isinstance(data.get("notes"), list) else []
        exchanges = [e for item in raw if (e := Exchange.from_dict(item)) is not None]
        notes = [n for n in [*raw, *loose] if isinstance(n, str)]
        summary = ConversationSummary.from_dict(data.get("summary"))
        return cls(str(data.get("id") or "") or None, exchanges, notes, summary)


def fit_conversation(run: Any) -> None:
    """Size the run's conversation memory to its model's context window (small local models get less)."""
    from lsp_agent.agent.model.client import context_window

    if run.session is not None:
        run.session.fit_to_window(context_window(run.settings.model or "", run.settings.context_window))


def sessions_dir() -> Path:
    """Where conversations are persisted, for every front-end (the user cache dir)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("lsp-agent")) / "sessions"
