"""The completion model client against the scripted server: streamed text, the stream closed when the suggestion
is complete or the request is cancelled, and Codestral's FIM endpoint through litellm."""

from __future__ import annotations

import asyncio

import pytest

from lsp_agent.completion.fim_client import CompletionModelError, FimClient, FimRequest
from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.fixture()
def model():
    with ScriptedModelServer([]) as server:
        yield server


async def test_a_complete_suggestion_closes_the_stream_and_reports_the_servers_counts(model):
    timings = {"prompt_n": 12, "prompt_ms": 30.0, "predicted_n": 4, "predicted_ms": 50.0}
    model.add_steps([{"content": "x = 1\n" + "y" * 200, "chunk_delay": 0.05, "timings": timings}])
    client = FimClient("openai/qwen2.5-coder-1.5b", model.base_url, None, 30)
    result = await client.stream(FimRequest("<|fim_prefix|>", max_tokens=100), lambda text: "\n" in text)
    await client.close()
    assert result.stopped_early and result.text.startswith("x = 1\n")
    for _ in range(100):
        if model.streams:
            break
        await asyncio.sleep(0.02)
    sent, total = model.streams[-1]
    assert sent < total / 2
    body = model.requests[-1]
    assert body["cache_prompt"] is True and body["model"] == "qwen2.5-coder-1.5b"


async def test_the_server_counts_arrive_with_a_finished_reply(model):
    model.add_steps([{"content": "a + b", "timings": {"prompt_n": 7}}])
    client = FimClient("openai/qwen2.5-coder-1.5b", model.base_url, None, 30)
    result = await client.stream(FimRequest("p", max_tokens=20), lambda text: False)
    await client.close()
    assert (result.text, result.finish_reason, result.timings) == ("a + b", "stop", {"prompt_n": 7})
    assert result.usage["prompt_tokens"] >= 1


async def test_a_cancelled_request_closes_its_stream(model):
    model.add_steps([{"content": "z" * 400, "chunk_delay": 0.05}])
    client = FimClient("openai/qwen2.5-coder-1.5b", model.base_url, None, 30)
    task = asyncio.ensure_future(client.stream(FimRequest("p", max_tokens=200), lambda text: False))
    while not model.requests:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if model.streams:
            break
        await asyncio.sleep(0.02)
    assert model.streams[-1][0] < model.streams[-1][1] / 2
    await client.close()


async def test_a_server_that_is_down_is_one_clear_error():
    client = FimClient("openai/qwen2.5-coder-1.5b", "http://127.0.0.1:9/v1", None, 5)
    with pytest.raises(CompletionModelError, match="127.0.0.1:9/v1"):
        await client.stream(FimRequest("p"), lambda text: False)


async def test_codestral_gets_prompt_and_suffix_through_litellm(model, litellm_imported):
    model.add_steps([{"content": "a + b"}])
    client = FimClient(
        "text-completion-codestral/codestral-latest", model.base_url + "/fim/completions", "k", 30
    )
    request = FimRequest(
        "def add(a, b):\n    return ", suffix="\n\nprint(add(1, 2))", max_tokens=20, stop=["\n"]
    )
    result = await client.stream(request, lambda text: False)
    assert result.text == "a + b"
    body = model.requests[-1]
    assert (body["prompt"], body["suffix"], body["stream"]) == (request.prompt, request.suffix, True)
