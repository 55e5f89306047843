"""Model faults through litellm's real HTTP path: keyless servers, permanent vs transient errors, Retry-After,
whole-request timeouts, malformed bodies, and model output that used to crash the loop."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from agent_support import call, done, run_script, scripted_settings

from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import PLACEHOLDER_KEY, ModelClient, ModelError
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer

HI = [{"role": "user", "content": "hi"}]
MALFORMED = {
    "body": {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [{}]},
                "finish_reason": "tool_calls",
            }
        ],
    }
}


@pytest.fixture
def no_keys(monkeypatch):
    """No provider key anywhere in the environment."""
    for name in ("OPENAI_API_KEY", "LSP_AGENT_API_KEY", "OPENAI_ADMIN_KEY", "AZURE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _fails(server: ScriptedModelServer, **changes) -> tuple[ModelError, float]:
    """The ModelError one complete() ends with, and how long it took."""
    client = ModelClient(scripted_settings(server, **changes), retry_base=0.01, max_retries=2)
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        await client.complete(HI)
    return info.value, time.monotonic() - started


# --- credentials ---------------------------------------------------------------------------------------------


async def test_a_keyless_local_server_works_without_any_api_key(workspace, no_keys):
    with ScriptedModelServer([done("no key needed")]) as server:
        settings = Settings(model="openai/scripted", api_base=server.base_url)
        result = await AgentRun("t", settings, workspace).run()
    assert result.success and result.answer == "no key needed"
    assert server.headers[0]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


async def test_a_configured_key_is_sent_as_it_is(no_keys):
    with ScriptedModelServer([{"content": "ok"}]) as server:
        await ModelClient(scripted_settings(server)).complete(HI)
    assert server.headers[0]["authorization"] == "Bearer test"


async def test_a_missing_key_for_a_hosted_provider_is_permanent_and_says_what_to_set(no_keys):
    client = ModelClient(Settings(model="openai/gpt-4o-mini"), retry_base=0.01)
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        await client.complete(HI)
    assert info.value.kind == "auth" and not info.value.transient
    assert "no API key" in str(info.value) and "OPENAI_API_KEY" in str(info.value)
    assert time.monotonic() - started < 2  # not retried


# --- permanent and transient failures ------------------------------------------------------------------------


async def test_a_closed_port_names_the_url_and_is_retried_only_briefly():
    base = f"http://127.0.0.1:{_free_port()}/v1"
    client = ModelClient(Settings(model="openai/x", api_base=base, api_key="k"), retry_base=0.01)
    retries: list[int] = []
    client.on_retry = lambda attempt, delay, message: retries.append(attempt)
    with pytest.raises(ModelError) as info:
        await client.complete(HI)
    message = str(info.value)
    assert base in message and "may not be running" in message and "gave up after 3 attempts" in message
    assert retries == [1, 2]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (MALFORMED, "not a valid chat completion"),
        ({"body": "this is not JSON {"}, "not a valid chat completion"),
    ],
)
async def test_a_malformed_body_ends_at_once_without_a_traceback(fault, expected, stream):
    with ScriptedModelServer([fault, {"content": "never reached"}]) as server:
        client = ModelClient(scripted_settings(server), retry_base=0.01, stream=stream)
        with pytest.raises(ModelError) as info:
            await client.complete(HI)
    message = str(info.value)
    assert info.value.kind == "malformed" and len(server.requests) == 1
    assert expected in message
    assert "Traceback" not in message and 'File "' not in message and server.base_url in message


async def test_retry_after_is_honoured():
    script = [{"status": 429, "headers": {"Retry-After": "2"}}, {"content": "after waiting"}]
    with ScriptedModelServer(script) as server:
        client = ModelClient(scripted_settings(server), retry_base=0.01)
        reply = await client.complete(HI)
    assert reply.content == "after waiting" and reply.attempts == 2
    assert server.request_times[1] - server.request_times[0] >= 1.95


async def test_a_retry_after_beyond_the_cap_ends_the_run_at_once():
    with ScriptedModelServer([{"status": 429, "headers": {"Retry-After": "600"}}]) as server:
        error, seconds = await _fails(server)
    assert "asks to wait 600 s" in str(error) and seconds < 2 and len(server.requests) == 1


async def test_no_retry_runs_past_the_deadline():
    with ScriptedModelServer(
        [{"status": 429, "headers": {"Retry-After": "5"}}, {"content": "late"}]
    ) as server:
        client = ModelClient(scripted_settings(server), retry_base=0.01)
        client.deadline = time.monotonic() + 2
        with pytest.raises(ModelError) as info:
            await client.complete(HI)
    assert "deadline" in str(info.value) and len(server.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("fault", [{"content": "slow", "trickle": 0.3}, {"endless": True}])
async def test_a_trickling_or_endless_reply_is_bounded_as_a_whole_and_the_connection_closed(fault, stream):
    with ScriptedModelServer([fault, fault, fault]) as server:
        client = ModelClient(scripted_settings(server, request_timeout=1.0), retry_base=0.01, max_retries=2)
        client.stream = stream
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            await client.complete(HI)
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 3
        while server.disconnects < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # the server notices at its next write
    assert "did not finish its reply within 1 s" in str(info.value) and "gave up after 2 attempts" in str(
        info.value
    )
    assert 1.9 < elapsed < 5  # a timed-out request is retried once
    assert server.disconnects == 2  # each abandoned reply stopped the server's work


async def test_a_hang_up_is_retried():
    with ScriptedModelServer([{"hang_up": True}, {"content": "second try"}]) as server:
        reply = await ModelClient(scripted_settings(server), retry_base=0.01).complete(HI)
    assert reply.content == "second try" and reply.attempts == 2


# --- model output that used to crash the loop ---------------------------------------------------------------


async def test_a_final_answer_in_tool_call_tags_ends_a_prompt_mode_run(workspace):
    reply = '<tool_call>{"name": "final_answer", "arguments": {"answer": "42"}}</tool_call>'
    o = await run_script(workspace, [{"content": reply}], tool_calling="prompt")
    assert o.result.success and o.result.answer == "42" and o.result.error is None


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_lone_surrogates_in_thought_tool_path_and_answer_do_not_crash(workspace, mode):
    if mode == "native":
        first = {"content": "look \ud800", "tool_calls": [call("read_file", path="pkg/\ud800.py")]}
    else:
        first = {
            "content": 'look \ud800<tool_call>{"name": "read_file", "arguments": {"path": "pkg/\ud800.py"}}</tool_call>'
        }
    o = await run_script(workspace, [first, {"content": "answer \ud800"}], tool_calling=mode)
    assert o.result.success and o.result.answer == "answer \ufffd"
    result = o.of("tool_result")[0]
    assert not result["ok"] and "not found" in result["output"]
    assert o.of("thought")[0]["text"].startswith("look \ufffd")
    assert o.result.error is None and not [e for e in o.of("error") if "internal" in e["message"]]


async def test_arguments_nested_400_levels_deep_become_a_tool_error_not_a_lost_event(workspace):
    deep: dict = {"leaf": 1}
    for _ in range(400):
        deep = {"a": deep}
    o = await run_script(workspace, [{"content": "", "tool_calls": [call("read_file", **deep)]}, done("ok")])
    assert o.result.success
    event = o.of("tool_call")[0]
    assert event["name"] == "read_file" and isinstance(event["arguments"], str)
    result = o.of("tool_result")[0]
    assert not result["ok"] and "levels deep" in result["output"]


async def test_cancelling_a_run_mid_reply_closes_the_connection(workspace):
    with ScriptedModelServer([{"endless": True}]) as server:
        settings = scripted_settings(server)
        run = AgentRun("t", settings, workspace, model_client=ModelClient(settings))
        task = asyncio.ensure_future(run.run())
        while not server.requests:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # the reply is streaming in
        run.cancel()
        result = await asyncio.wait_for(task, 5)
        deadline = time.monotonic() + 3
        while not server.disconnects and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    assert result.stop_reason == "cancelled"
    assert server.disconnects == 1  # the model server stopped sending: its work on the reply ended
