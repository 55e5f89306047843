"""Bounded replies through litellm's real path: max_tokens, stop sequences after the first action in prompt mode,
and streaming so that a cancelled or timed-out request closes the connection and the server stops generating."""

from __future__ import annotations

import asyncio
import time

import pytest
from agent_support import run_script, scripted_settings

from lsp_agent.agent.model.client import ModelClient, ModelError
from lsp_agent.agent.model.parsing import ACTION_STOP_SEQUENCES, parse_reply
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer

HI = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
# What the 1.5B model wrote: its action, then an observation and a conclusion it made up.
RAMBLING = (
    '<THOUGHT>Read the file first.</THOUGHT>\n<ACTION>{"name": "read_file", "arguments": {"path": "calc.py"}}'
    "</ACTION>\nThe output is: def add(a, b): return a - b\nSo the bug is the minus sign. "
    + "Let me think. "
    * 50
)
ESCAPED = (
    "&lt;THOUGHT&gt;Read the file first.&lt;/THOUGHT&gt;\n&lt;ACTION&gt;{&#34;name&#34;: &#34;read_file&#34;, "
    "&#34;arguments&#34;: {&#34;path&#34;: &#34;calc.py&#34;}}&lt;/ACTION&gt;\nThe output is: 42"
)


@pytest.mark.parametrize("stream", [False, True])
async def test_prompt_mode_stops_after_the_first_action_and_restores_its_closing_tag(stream) -> None:
    with ScriptedModelServer([{"content": RAMBLING}]) as server:
        settings = scripted_settings(server, tool_calling="prompt", max_tokens=300)
        reply = await ModelClient(settings, stream=stream).complete(HI, TOOLS)
    sent = server.requests[0]
    assert sent["max_tokens"] == 300 and sent["stop"] == list(ACTION_STOP_SEQUENCES)
    assert bool(sent.get("stream")) is stream and "tools" not in sent
    assert reply.finish_reason == "stop"
    assert reply.content.endswith('{"path": "calc.py"}}</ACTION>') and "The output is" not in reply.content
    assert reply.message["content"] == reply.content  # the history carries a well-formed action
    assert reply.completion_tokens < 30  # the scripted server counts only what it sent
    parsed = parse_reply(reply.content)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("read_file", {"path": "calc.py"})]


async def test_an_escaped_action_is_stopped_at_its_escaped_closing_tag_and_parsed() -> None:
    with ScriptedModelServer([{"content": ESCAPED}]) as server:
        settings = scripted_settings(server, tool_calling="prompt")
        reply = await ModelClient(settings, stream=True).complete(HI, TOOLS)
    assert reply.content.endswith("}}&lt;/ACTION&gt;") and "The output is" not in reply.content
    parsed = parse_reply(reply.content)
    assert parsed.thought == "Read the file first."
    assert [(c.name, c.arguments) for c in parsed.calls] == [("read_file", {"path": "calc.py"})]


async def test_native_mode_and_requests_without_tools_get_max_tokens_but_no_stop() -> None:
    with ScriptedModelServer([{"content": "a </ACTION> b"}, {"content": "a </ACTION> b"}]) as server:
        native = ModelClient(scripted_settings(server, tool_calling="native"), stream=False)
        first = await native.complete(HI, TOOLS)
        summary = await ModelClient(scripted_settings(server, tool_calling="prompt"), stream=False).complete(
            HI
        )
    assert [r["max_tokens"] for r in server.requests] == [Settings().max_tokens] * 2
    assert all("stop" not in r for r in server.requests)
    assert first.content == summary.content == "a </ACTION> b"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_reply_cut_at_max_tokens_says_so(stream) -> None:
    with ScriptedModelServer([{"content": "word " * 100}]) as server:
        reply = await ModelClient(scripted_settings(server, max_tokens=8), stream=stream).complete(HI)
    assert reply.finish_reason == "length" and len(reply.content) == 32  # 8 tokens of 4 characters


def test_streaming_is_the_default() -> None:
    assert Settings().stream is True and ModelClient(Settings(model="openai/x")).stream is True
    assert ModelClient(Settings(model="openai/x", stream=False)).stream is False


async def _until(predicate, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


async def test_a_cancelled_streamed_request_closes_the_connection_and_the_server_stops_generating() -> None:
    slow = {"content": "x" * 16 * 100, "chunk_delay": 0.1}  # 100 chunks, 10 s of generation
    with ScriptedModelServer([slow]) as server:
        client = ModelClient(scripted_settings(server), stream=True, max_retries=0)
        task = asyncio.create_task(client.complete(HI))
        await _until(lambda: bool(server.requests))
        await asyncio.sleep(0.5)  # a few chunks in
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await _until(lambda: bool(server.streams))
        assert server.disconnects == 1
        sent, total = server.streams[0]
        assert 0 < sent < total // 2  # it stopped at the next chunk, not after generating the reply


async def test_a_timed_out_streamed_request_stops_the_server_before_the_next_request() -> None:
    slow = {"content": "x" * 16 * 100, "chunk_delay": 0.1}
    with ScriptedModelServer([slow, {"content": "next"}]) as server:
        client = ModelClient(scripted_settings(server, request_timeout=1.0), stream=True, max_retries=0)
        with pytest.raises(ModelError) as info:
            await client.complete(HI)
        assert info.value.kind == "timeout"
        await _until(lambda: bool(server.streams))
        sent, total = server.streams[0]
        assert sent < total // 3 and server.disconnects == 1
        assert (await client.complete(HI)).content == "next"


async def test_a_prompt_mode_run_follows_escaped_actions_to_the_end(workspace) -> None:
    read = ESCAPED.replace("calc.py", "pkg/calc.py")
    finish = (
        "&lt;THOUGHT&gt;Done.&lt;/THOUGHT&gt;\n&lt;ACTION&gt;{&quot;name&quot;: &quot;task_complete&quot;, "
        "&quot;arguments&quot;: {&quot;summary&quot;: &quot;read it&quot;}}&lt;/ACTION&gt;\nThe task is complete."
    )
    o = await run_script(
        workspace, [{"content": read}, {"content": finish}], tool_calling="prompt", stream=True
    )
    assert o.result.success and o.result.stop_reason == "complete" and o.result.answer == "read it"
    assert [e["name"] for e in o.of("tool_result") if e["ok"]] == ["read_file", "task_complete"]
    assert "def add" in o.requests[1]["messages"][-1]["content"]  # the real file, not the invented output
    assert o.requests[1]["messages"][-2]["content"].endswith("&lt;/ACTION&gt;")
