"""Context compaction: thresholds, kept head and recent turns, cut outputs, tool turns never split."""

from __future__ import annotations

from agent_support import call, done, run_script

from lsp_agent.agent.conversation.compaction import MARKER, Compactor, TokenCounter


def _turns(n: int, output: str) -> list[dict]:
    msgs = [{"role": "system", "content": "system prompt"}, {"role": "user", "content": "Task: do it"}]
    for i in range(n):
        msgs.append(
            {
                "role": "assistant",
                "content": f"step {i}",
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
                ],
            }
        )
        msgs.append(
            {"role": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": f"{i}: {output}"}
        )
    return msgs


def _assert_tool_turns_intact(messages: list[dict]) -> None:
    """Every tool message answers a tool call of the assistant message before its run of tool messages."""
    open_ids: set[str] = set()
    for msg in messages:
        if msg["role"] == "assistant":
            open_ids = {c["id"] for c in msg.get("tool_calls") or []}
        elif msg["role"] == "tool":
            assert msg["tool_call_id"] in open_ids, f"orphan tool result {msg['tool_call_id']}"
        else:
            open_ids = set()


def test_token_counter_is_cached_and_plausible():
    counter = TokenCounter("openai/gpt-4o-mini")
    msg = {"role": "user", "content": "hello world " * 50}
    first = counter.message_tokens(msg)
    assert 90 <= first <= 120
    assert counter.message_tokens(dict(msg)) == first
    assert counter.count([msg, msg]) == 2 * first + 3


async def test_compaction_keeps_head_and_recent_turns_and_never_splits_a_turn():
    messages = _turns(20, "word " * 60)
    counter = TokenCounter("openai/scripted")
    compactor = Compactor(counter, window=2000, threshold=0.8)
    assert compactor.needs(messages)
    out, report = await compactor.compact(messages)
    assert out[0] == messages[0]
    assert out[1]["content"].startswith("Task: do it\n\n" + MARKER)
    assert out[2]["role"] == "assistant" and out[-1] == messages[-1]
    assert report.removed > 0 and report.after < report.before and report.after <= 2000 * 0.8
    assert report.removed + len(out) - 2 == len(messages) - 2
    _assert_tool_turns_intact(out)
    again, _ = await compactor.compact(out + _turns(20, "word " * 60)[2:])
    assert again[1]["content"].count(MARKER) == 1  # the note is replaced, not stacked


async def test_oversized_outputs_are_cut_first():
    messages = _turns(2, "x " * 5000)
    compactor = Compactor(TokenCounter("openai/scripted"), window=4000, threshold=0.8)
    out, report = await compactor.compact(messages)
    assert report.truncated == 2 and report.removed == 0
    assert all("[TRUNCATED: output cut from" in m["content"] for m in out if m["role"] == "tool")
    _assert_tool_turns_intact(out)


async def test_below_threshold_nothing_happens():
    compactor = Compactor(TokenCounter("openai/scripted"), window=100_000)
    assert not compactor.needs(_turns(3, "short"))


async def test_reserved_tokens_count_against_the_window():
    messages = _turns(3, "word " * 100)
    compactor = Compactor(TokenCounter("openai/scripted"), window=2000, threshold=0.8)
    size = compactor.counter.count(messages)
    assert size < compactor.limit and not compactor.needs(messages)
    compactor.reserved = 1600 - size + 1  # e.g. native tool schemas sent with every request
    assert compactor.needs(messages)
    out, report = await compactor.compact(messages)
    assert report.removed > 0 and report.before == size + compactor.reserved
    _assert_tool_turns_intact(out)


async def test_native_tool_schemas_are_counted_in_a_run(workspace):
    (workspace / "small.py").write_text("".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(15)))
    reads = [{"content": f"read {i}", "tool_calls": [call("read_file", path="small.py")]} for i in range(3)]
    o = await run_script(workspace, [*reads, done("ok")], context_window=3000, profile="full")
    reserved = o.run.conversation.compactor.reserved
    assert reserved > 1000  # the built-in tools' JSON schemas
    first = o.of("compaction")[0]
    # the messages alone were under the 80% threshold: only counting the tools made the run compact
    assert first["before"] - reserved < 0.8 * 3000 < first["before"]


def _big_file(workspace) -> None:
    lines = [
        f"def function_{i}(value):\n    return value * {i} + len('padding text for tokens')\n"
        for i in range(20)
    ]
    (workspace / "big.py").write_text("".join(lines))


async def test_run_compacts_a_long_conversation(workspace):
    _big_file(workspace)
    reads = [{"content": f"read {i}", "tool_calls": [call("read_file", path="big.py")]} for i in range(8)]
    o = await run_script(workspace, [*reads, done("read it all")], context_window=4000)
    assert o.result.success
    compactions = o.of("compaction")
    assert (
        compactions and compactions[0]["removed"] > 0 and compactions[0]["after"] < compactions[0]["before"]
    )
    last = o.requests[-1]["messages"]
    assert MARKER in last[1]["content"] and last[0]["role"] == "system"
    assert len(last) < 2 + 2 * 8
    _assert_tool_turns_intact(last)


async def test_run_with_model_written_summary(workspace):
    _big_file(workspace)
    reads = [{"content": f"read {i}", "tool_calls": [call("read_file", path="big.py")]} for i in range(8)]
    summary = {"match": "Summarize this part", "content": "SUMMARY: big.py holds function_0..function_19."}
    o = await run_script(
        # 5000 tokens: one compaction (the native tool schemas count against the window too)
        workspace,
        [*reads, summary, done("ok")],
        context_window=5000,
        compaction_summary=True,
    )
    assert o.result.success and o.of("compaction")[0]["summarized"]
    later = [
        r for r in o.requests if len(r["messages"]) > 1 and "SUMMARY: big.py" in r["messages"][1]["content"]
    ]
    assert later, "the summary reaches the following requests"
    summary_request = next(r for r in o.requests if "Summarize this part" in r["messages"][-1]["content"])
    assert "tools" not in summary_request and "read_file" in summary_request["messages"][-1]["content"]
