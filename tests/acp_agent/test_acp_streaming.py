"""Streaming the model's text to ACP: markup split as it streams, pieces sent live, replies kept whole for load."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.acp.streaming import ForHistory, Live, MarkupSplitter
from lsp_agent.acp.updates import TurnTranslator
from lsp_agent.agent.events import AgentEvent


def event(name: str, /, **data: object) -> AgentEvent:
    return AgentEvent(name, "run", dict(data))


def fed(splitter: MarkupSplitter, *deltas: str) -> list[tuple[str, str]]:
    """Every piece the splitter lets out for these deltas and its flush, runs of one channel joined."""
    pieces: list[tuple[str, str]] = []
    for delta in deltas:
        pieces += splitter.feed(delta)
    pieces += splitter.flush()
    joined: list[tuple[str, str]] = []
    for channel, text in pieces:
        if joined and joined[-1][0] == channel:
            joined[-1] = (channel, joined[-1][1] + text)
        else:
            joined.append((channel, text))
    return joined


def test_markup_split_across_deltas_shows_thought_and_hides_the_action() -> None:
    reply = '<THOUGHT>Read calc.py first.</THOUGHT>\n<ACTION>{"name": "read_file", "arguments": {}}</ACTION>'
    deltas = [reply[i : i + 3] for i in range(0, len(reply), 3)]  # tags cut in every possible place
    assert fed(MarkupSplitter(tagged=True), *deltas) == [
        ("thought", "Read calc.py first."),
        ("message", "\n"),
    ]


def test_plain_text_in_prompt_mode_is_the_message_and_a_lone_bracket_is_kept() -> None:
    assert fed(MarkupSplitter(tagged=True), "The answer: a ", "<", " b") == [("message", "The answer: a < b")]
    assert fed(MarkupSplitter(tagged=True), "ends with <") == [("message", "ends with <")]
    escaped = fed(MarkupSplitter(tagged=True), "ok &lt;ACT", "ION&gt;{...}")
    assert escaped == [("message", "ok ")]
    assert fed(MarkupSplitter(tagged=False), "<ACTION>", "x") == [("message", "<ACTION>x")]


def translate_all(translator: TurnTranslator, *events: AgentEvent) -> list[object]:
    out: list[object] = []
    for item in events:
        out += translator.translate(item)
    return out


def test_streamed_native_reply_goes_live_once_and_whole_into_the_history(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t")
    out = translate_all(
        translator,
        event("start", toolCalling="native", style="react", contextWindow=1000),
        event("text_delta", text="The answer ", request=1),
        event("text_delta", text="is 4.", request=1),
        event("usage", cost=0.5, contextTokens=120, contextWindow=1000),
        event("thought", text="The answer is 4.", iteration=1),
        event("done", answer="The answer is 4."),
    )
    live = [item.update for item in out if isinstance(item, Live)]
    history = [item.update for item in out if isinstance(item, ForHistory)]
    chunks = [u for u in live if u.session_update == "agent_message_chunk"]
    assert [c.content.text for c in chunks] == ["The answer ", "is 4."]
    assert [h.content.text for h in history] == ["The answer is 4."]  # not repeated at the end
    (usage,) = [u for u in live if u.session_update == "usage_update"]
    assert (usage.used, usage.size, usage.cost.amount, usage.cost.currency) == (120, 1000, 0.5, "USD")
    assert [u for u in out if not isinstance(u, Live | ForHistory)] == []


def test_task_complete_summary_after_streamed_text_is_a_new_paragraph(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t", earlier_cost=1.0)
    out = translate_all(
        translator,
        event("start", toolCalling="prompt", style="react", contextWindow=1000),
        event("text_delta", text="<THOUGHT>done</THOUGHT>Wrapping up.", request=1),
        event("usage", cost=0.25, contextTokens=10),
        event("tool_call", name="task_complete", arguments={"summary": "fixed add"}),
        event("done", answer="fixed add"),
    )
    sent = [
        item.update if isinstance(item, Live) else item for item in out if not isinstance(item, ForHistory)
    ]
    kinds = [(u.session_update, getattr(getattr(u, "content", None), "text", None)) for u in sent]
    assert ("agent_thought_chunk", "done") in kinds and ("agent_message_chunk", "Wrapping up.") in kinds
    assert kinds[-1] == ("agent_message_chunk", "\n\nfixed add")
    (usage,) = [u for u in sent if u.session_update == "usage_update"]
    assert usage.cost.amount == 1.25  # the session's total, earlier turns included


def test_a_retried_reply_streams_again_after_the_notice(tmp_path: Path) -> None:
    translator = TurnTranslator(tmp_path, "t")
    out = translate_all(
        translator,
        event("start", toolCalling="native", style="react", contextWindow=1000),
        event("text_delta", text="The ans", request=1),
        event(
            "error", message="the reply stream ended early (retry 1 in 1.0s)", kind="transient", retrying=True
        ),
        event("text_delta", text="The answer.", request=1),
        event("usage", cost=0.0, contextTokens=5),
        event("done", answer="The answer."),
    )
    sent = [
        item.update if isinstance(item, Live) else item for item in out if not isinstance(item, ForHistory)
    ]
    texts = [u.content.text for u in sent if u.session_update == "agent_message_chunk"]
    assert texts[0] == "The ans" and "retry 1" in texts[1] and texts[1].startswith("\n\n")
    assert texts[2] == "\n\nThe answer." and len(texts) == 3  # not repeated at the end


def test_streamed_text_reaches_the_sink_but_never_the_records() -> None:
    from lsp_agent.agent.events import RunEvents

    shown: list[str] = []
    recorded: list[str] = []
    events = RunEvents("run", lambda e: shown.append(e.kind), [lambda e: recorded.append(e.kind)])
    events.stream_text = True
    events.emit("text_delta", text="Hel", request=1)
    events.emit("usage", detail={"content": "Hello"}, promptTokens=1)
    assert shown == ["text_delta", "usage"]
    assert recorded == ["usage"]  # the transcript keeps the reply whole, from its usage record
