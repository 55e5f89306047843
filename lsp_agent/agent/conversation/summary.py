"""Folding a conversation's oldest exchanges into a model-written summary, as a run's context compaction does.

When the exchanges an ask would show exceed the conversation's token budget, the oldest are summarized by the
ask's own model (one request through the run's Conversation.summarize, the same path compaction uses, bounded by
maxTokens and counted in the run's usage) and the prompt shows the summary instead of them. The newest exchanges
that fit half the budget stay in full. Unlike a run's compaction this needs no compactionSummary setting: it costs
one request each time the conversation outgrows its budget, not one per compaction. When the summary cannot be
written (the request fails, the reply is empty) nothing is folded: the prompt shortens the oldest exchanges and
cuts what still does not fit with a marker, as before, and the log and a `context` event say so.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.agent.conversation.memory import ANSWER_SHARE, ConversationSummary, Exchange
from lsp_agent.agent.outcome import StopRun

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.session import Session

log = logging.getLogger(__name__)

KEEP_SHARE = (
    0.5  # the exchanges left after folding take at most this share of the budget (compaction's target)
)


def exchanges_to_fold(session: Session) -> list[Exchange]:
    """The oldest unfolded exchanges to fold, or [] when the conversation fits its budget in full."""
    exchanges = session.unfolded()
    max_chars = int(session.budget * ANSWER_SHARE) * 4
    sizes = [session.count(e.full_text(max_chars)) for e in exchanges]
    fixed = sum(session.count(n) for n in session.notes)
    fixed += session.count(session.summary.prompt_text()) if session.summary is not None else 0
    if len(exchanges) < 2 or fixed + sum(sizes) <= session.budget:
        return []
    keep, used = 0, fixed
    for size in reversed(sizes):
        if keep and used + size > session.budget * KEEP_SHARE:
            break
        keep, used = keep + 1, used + size
    return exchanges[: len(exchanges) - keep]


def summary_input(session: Session, folding: list[Exchange]) -> list[dict[str, Any]]:
    """The folded exchanges as chat messages (with the earlier summary first): task, answer, what became of it."""
    messages: list[dict[str, Any]] = []
    if session.summary is not None:
        messages.append({"role": "user", "content": "Earlier summary: " + session.summary.text})
    for exchange in folding:
        answer = exchange.answer.strip() or "(no answer)"
        after = "\n".join(exchange.tail_lines())
        messages.append({"role": "user", "content": f"(run {exchange.run_id}) {exchange.task}"})
        messages.append({"role": "assistant", "content": f"({exchange.outcome}) {answer}\n{after}".strip()})
    return messages


async def fold_conversation(run: Any) -> None:
    """Before an ask's first message: fold the session's oldest exchanges into a summary when over budget."""
    session: Session | None = run.session
    if session is None:
        return
    folding = exchanges_to_fold(session)
    if not folding:
        return
    covered = len(folding) + (session.summary.exchanges if session.summary is not None else 0)
    conversation = run.conversation
    try:
        text = await conversation.summarize(
            summary_input(session, folding), prompts.conversation_summary_request
        )
    except StopRun as exc:
        if exc.stop_reason != "error":
            raise  # cancelled, or over the token budget: the run stops as it would for any request
        _fallback(run, session, folding, str(exc))
        return
    if not text.strip():
        _fallback(run, session, folding, "the model returned an empty summary")
        return
    session.fold(folding, ConversationSummary(text.strip(), covered, conversation.model, time.time()))
    status = f"conversation: the {len(folding)} oldest exchanges were folded into a summary by {conversation.model}"
    log.info("%s (session %s)", status, session.id)
    run.events.emit("context", what="conversation", summarized=True, folded=len(folding), status=status)


def _fallback(run: Any, session: Session, folding: list[Exchange], why: str) -> None:
    """No summary: the prompt cuts the oldest exchanges with a marker; the log and a `context` event say so."""
    status = (
        f"conversation: no summary of the {len(folding)} oldest exchanges ({why}); "
        "the prompt leaves out what does not fit, with a marker"
    )
    log.warning("%s (session %s)", status, session.id)
    run.events.emit("context", what="conversation", summarized=False, folded=0, status=status)
