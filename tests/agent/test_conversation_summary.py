"""Which exchanges a conversation over its budget folds into a summary, and what the summary request carries."""

from __future__ import annotations

from types import SimpleNamespace

from lsp_agent.agent.conversation.memory import ConversationSummary
from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.summary import exchanges_to_fold, summary_input


def _session(answers: list[str], budget: int = 1000) -> Session:
    session = Session("s")
    session.budget = budget
    for i, answer in enumerate(answers):
        result = SimpleNamespace(answer=answer, stop_reason="complete", proposal=None)
        session.record_run(f"r{i}", f"task {i}", result)
    return session


def test_a_conversation_within_its_budget_folds_nothing():
    assert exchanges_to_fold(_session(["short"] * 5)) == []


def test_the_oldest_exchanges_are_folded_and_the_newest_fit_half_the_budget():
    session = _session(["x" * 1200] * 6)  # ~300 tokens each, 1,800 in all against 1,000
    folding = exchanges_to_fold(session)
    assert [e.run_id for e in folding] == ["r0", "r1", "r2", "r3", "r4"]
    session.fold(folding, ConversationSummary("earlier work", 5))
    assert exchanges_to_fold(session) == []
    text = session.context_text()
    assert "earlier work" in text and "r5" in text and "r0" not in text


def test_one_huge_exchange_is_not_folded_alone():
    assert exchanges_to_fold(_session(["x" * 50_000])) == []


def test_the_summary_input_keeps_what_was_applied_or_rejected_and_why():
    session = _session(["x" * 1200] * 4)
    session.exchanges[0].proposed = ["calc.py"]
    session.record("user rejected changes of run r0: calc.py; reason: keep the old API")
    session.record("user applied the proposal of run r1: notes.py")
    session.summary = ConversationSummary("the user set up the project", 2)
    messages = summary_input(session, session.exchanges[:2])
    text = "\n".join(m["content"] for m in messages)
    assert messages[0]["content"] == "Earlier summary: the user set up the project"
    assert "Proposed changes: calc.py" in text
    assert "reason: keep the old API" in text and "user applied the proposal of run r1" in text
