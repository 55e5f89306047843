"""Conversation memory: full answers, notes on their exchange, a token budget, and compaction by exchange."""

from __future__ import annotations

from types import SimpleNamespace

from lsp_agent.agent.conversation.memory import MARKER, estimate_tokens
from lsp_agent.agent.conversation.session import MAX_EXCHANGES, Session


def _result(answer: str, stop: str = "complete", paths: list[str] | None = None) -> SimpleNamespace:
    proposal = SimpleNamespace(paths=lambda: list(paths)) if paths else None
    return SimpleNamespace(answer=answer, stop_reason=stop, proposal=proposal)


def test_answers_are_kept_in_full_and_notes_join_their_exchange():
    session = Session("s")
    long_answer = "The parser splits on commas. " * 60  # ~1,700 characters: the old memory cut at 300
    session.begin("r1", "explain the parser")
    session.record_run("r1", "explain the parser", _result(long_answer, paths=["pkg/parse.py"]))
    session.record("user rejected changes of run r1 (x): pkg/parse.py line 3; reason: keep the old API")
    session.record("something without a run")
    text = session.context_text()
    assert long_answer.strip() in text
    assert "Proposed changes: pkg/parse.py" in text
    assert "Then: user rejected changes of run r1 (x): pkg/parse.py line 3; reason: keep the old API" in text
    assert text.rstrip().endswith("Notes: something without a run")


def test_running_exchanges_are_not_in_the_prompt_and_retried_ones_say_so():
    session = Session("s")
    session.record_run("r1", "add a flag", _result("added --verbose"))
    session.mark_retried("r1")
    session.begin("r2", "add a flag")
    text = session.context_text()
    assert "The user discarded this attempt and asked again." in text and "r2" not in text
    assert session.last().run_id == "r2" and session.last(include_retried=True).run_id == "r2"
    session.end("r2", "error", "no model configured")
    session.end("r1", "cancelled")  # a finished exchange keeps its outcome
    assert "Agent (error): (no answer: no model configured)" in session.context_text()
    assert session.exchange("r1").outcome == "complete"


def test_last_n_counts_exchanges_not_entries():
    session = Session("s")
    for i in range(MAX_EXCHANGES + 5):
        session.record_run(f"r{i}", f"task {i}", _result(f"answer {i}"))
        session.record(f"user applied the proposal of run r{i}")
        session.record(f"user rejected changes of run r{i}: reason {i}")
    assert len(session.exchanges) == MAX_EXCHANGES
    assert session.exchanges[0].run_id == "r5" and len(session.exchanges[-1].notes) == 2
    assert session.notes == []  # every note found its exchange


def test_over_budget_older_exchanges_shrink_then_give_way_to_a_marker():
    session = Session("s")
    session.budget = 1200
    for i in range(30):
        session.record_run(f"r{i}", f"task number {i}", _result(f"answer {i}: " + "details " * 150))
    text = session.context_text()
    assert estimate_tokens(text) <= session.budget + 50
    assert ("answer 29: " + "details " * 150).strip() in text  # the newest in full
    assert "User (run r28): task number 28" in text and "..." in text  # an older one, short
    assert MARKER in text and "r0)" not in text
    omitted = int(text.split(MARKER + " the ", 1)[1].split(" ", 1)[0])
    shown = sum(f"(run r{i})" in text for i in range(30))
    assert omitted + shown == 30


def test_one_huge_answer_is_cut_with_a_marker():
    session = Session("s")
    session.budget = 1000
    session.record_run("r1", "dump it", _result("x" * 50_000))
    text = session.context_text()
    assert "[answer cut from 50000 characters]" in text and estimate_tokens(text) < 1000


def test_the_budget_follows_the_models_context_window():
    session = Session("s")
    session.fit_to_window(8192)
    assert session.budget == 2048
    session.fit_to_window(200_000)
    assert session.budget == 8000
    session.fit_to_window(1024)
    assert session.budget == 1000
