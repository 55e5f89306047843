"""The scripted OpenAI-compatible server, exercised through litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def litellm():
    """litellm imported once for the module, offline price map."""
    import litellm as module

    module.suppress_debug_info = True
    return module


def _kw(server: ScriptedModelServer) -> dict:
    return {"model": "openai/scripted", "api_base": server.base_url, "api_key": "test", "max_retries": 0}


async def test_plain_reply_and_usage(litellm):
    with ScriptedModelServer(
        [{"content": "hello", "usage": {"prompt_tokens": 11, "completion_tokens": 2}}]
    ) as s:
        r = await litellm.acompletion(messages=[{"role": "user", "content": "hi"}], **_kw(s))
    assert r.choices[0].message.content == "hello"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (11, 2)
    assert s.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert s.requests[0]["model"] == "scripted"


async def test_streamed_reply(litellm):
    text = "a streamed reply that spans several chunks"
    with ScriptedModelServer([{"content": text}]) as s:
        stream = await litellm.acompletion(
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
            **_kw(s),
        )
        chunks = [c async for c in stream]
    assert len(chunks) > 2
    built = litellm.stream_chunk_builder(chunks)
    assert built.choices[0].message.content == text
    assert built.usage.completion_tokens > 0
    assert s.requests[0]["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_calls(litellm, stream):
    calls = [{"name": "read_file", "arguments": {"path": "a.py"}}, {"name": "list_files", "arguments": "{}"}]
    with ScriptedModelServer([{"content": "thinking", "tool_calls": calls}]) as s:
        r = await litellm.acompletion(messages=[{"role": "user", "content": "hi"}], stream=stream, **_kw(s))
        if stream:
            r = litellm.stream_chunk_builder([c async for c in r])
    got = r.choices[0].message.tool_calls
    assert [c.function.name for c in got] == ["read_file", "list_files"]
    assert json.loads(got[0].function.arguments) == {"path": "a.py"}
    assert got[1].function.arguments == "{}"
    assert got[0].id != got[1].id


async def test_error_statuses_and_exhaustion(litellm):
    with ScriptedModelServer([{"status": 429}, {"status": 500, "error": "boom"}]) as s:
        with pytest.raises(litellm.RateLimitError):
            await litellm.acompletion(messages=[{"role": "user", "content": "x"}], **_kw(s))
        with pytest.raises(litellm.InternalServerError, match="boom"):
            await litellm.acompletion(messages=[{"role": "user", "content": "x"}], **_kw(s))
        with pytest.raises(litellm.InternalServerError, match="script exhausted"):
            await litellm.acompletion(messages=[{"role": "user", "content": "last words"}], **_kw(s))
    assert len(s.requests) == 3


async def test_match_selects_step(litellm):
    script = [{"content": "generic"}, {"content": "about tests", "match": "pytest"}]
    with ScriptedModelServer(script) as s:
        first = await litellm.acompletion(
            messages=[{"role": "user", "content": "run pytest please"}], **_kw(s)
        )
        second = await litellm.acompletion(messages=[{"role": "user", "content": "something"}], **_kw(s))
    assert first.choices[0].message.content == "about tests"
    assert second.choices[0].message.content == "generic"


async def test_delay_can_be_aborted(litellm):
    with ScriptedModelServer([{"content": "late", "delay": 10}]) as s:
        task = asyncio.create_task(litellm.acompletion(messages=[{"role": "user", "content": "x"}], **_kw(s)))
        await asyncio.sleep(0.2)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - start < 1.0
        close_start = time.monotonic()
    assert time.monotonic() - close_start < 2.0


def test_models_endpoint():
    with ScriptedModelServer([]) as s, urllib.request.urlopen(s.base_url + "/models", timeout=5) as resp:
        data = json.load(resp)
    assert data["data"][0]["id"] == "scripted"


def test_command_line_entry_point(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from a file"}]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent.testing.scripted_model", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        base = proc.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
        req = urllib.request.Request(
            base + "/chat/completions",
            method="POST",
            data=json.dumps({"model": "scripted", "messages": []}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.load(resp)["choices"][0]["message"]["content"] == "from a file"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_bad_script_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"nope": 1}')
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent.testing.scripted_model", "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert "expected a JSON list of steps" in proc.stderr
