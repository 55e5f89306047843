"""LiveText: the model's streamed words coalesced per interval, markup hidden, each reply opened and closed once."""

from __future__ import annotations

import pytest

from lsp_agent.agent.loop.live_text import LivePiece, LiveText


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def live(tagged: bool = False) -> tuple[LiveText, list[LivePiece], list[float], Clock]:
    shown: list[LivePiece] = []
    timers: list[float] = []
    clock = Clock()
    text = LiveText(shown.append, 0.1, schedule=lambda delay, _: timers.append(delay), clock=clock)
    text.on_event("start", {"toolCalling": "prompt" if tagged else "native", "style": "react"})
    return text, shown, timers, clock


def test_deltas_within_the_interval_are_coalesced_and_a_timer_shows_the_rest() -> None:
    text, shown, timers, clock = live()
    text.on_event("text_delta", {"text": "The ", "request": 1})  # the first delta goes out at once
    for word in ("answer ", "is "):
        clock.now += 0.02
        text.on_event("text_delta", {"text": word, "request": 1})
    assert [p.text for p in shown] == ["The "] and shown[0].first and timers == [pytest.approx(0.08)]
    clock.now += 0.06
    text.flush()  # the timer fires
    assert [p.text for p in shown] == ["The ", "answer is "]
    text.on_event("text_delta", {"text": "4.", "request": 1})
    assert text.on_event("usage", {}) is False  # the reply ends: what waited, marked final
    assert [(p.text, p.final) for p in shown[2:]] == [("4.", True)]
    assert text.streamed == {1}


def test_markup_is_hidden_and_a_new_request_starts_a_new_reply() -> None:
    text, shown, _, clock = live(tagged=True)
    for delta in ("<THOU", "GHT>look</THOUGHT>ok <ACT", 'ION>{"name": "read_file"}</ACTION>'):
        clock.now += 1
        text.on_event("text_delta", {"text": delta, "request": 1})
    clock.now += 1
    text.on_event("text_delta", {"text": "next", "request": 2})
    text.end_reply()
    assert [(p.request, p.channel, p.text, p.first, p.final) for p in shown] == [
        (1, "thought", "look", True, False),
        (1, "message", "ok ", False, False),
        (1, "message", "", False, True),
        (2, "message", "next", True, False),
        (2, "message", "", False, True),
    ]


def test_a_reply_that_shows_nothing_sends_nothing() -> None:
    text, shown, _, _ = live(tagged=True)
    text.on_event("text_delta", {"text": '<ACTION>{"name": "x"}</ACTION>', "request": 1})
    text.on_event("tool_call", {"name": "x"})
    assert shown == [] and text.streamed == set()
