"""The litellm adapter: mode detection, retries with backoff, permanent errors, usage and cost."""

from __future__ import annotations

import pytest
from agent_support import call, done, run_script, scripted_settings

from lsp_agent.agent.model.client import (
    ModelClient,
    ModelError,
    context_window,
    merge_system_messages,
    resolve_merge_system,
    resolve_tool_calling,
)
from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.mark.parametrize(
    ("model", "override", "expected"),
    [
        ("openai/gpt-4o-mini", "auto", "native"),
        ("anthropic/claude-sonnet-4-5", "auto", "native"),
        ("openai/scripted", "auto", "native"),  # unknown OpenAI-compatible server: assume native
        ("openrouter/google/gemma-3-12b-it:free", "auto", "prompt"),
        ("ollama/gemma3:12b", "auto", "prompt"),
        ("openai/gpt-4o-mini", "prompt", "prompt"),
        ("openrouter/google/gemma-3-12b-it", "native", "native"),
    ],
)
def test_resolve_tool_calling(model, override, expected):
    assert resolve_tool_calling(model, override) == expected


def test_system_role_merging_rules():
    assert resolve_merge_system("openrouter/google/gemma-3-12b-it", "auto")
    assert resolve_merge_system("gemini/gemma-3-27b-it", "auto")  # litellm: supports_system_messages false
    assert resolve_merge_system("gpt-5.3-codex", "auto")
    assert not resolve_merge_system("gpt-5.3-codex", "never")
    assert not resolve_merge_system("openai/gpt-4o-mini", "auto")
    assert resolve_merge_system("openai/gpt-4o-mini", "always")
    assert not resolve_merge_system("ollama/gemma3", "never")
    merged = merge_system_messages(
        [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "U"},
            {"role": "assistant", "content": "A"},
        ]
    )
    assert merged == [{"role": "user", "content": "S\n\nU"}, {"role": "assistant", "content": "A"}]


def test_context_window_sources():
    assert context_window("openai/gpt-4o-mini") == 128_000
    assert context_window("openai/gpt-4o-mini", 4096) == 4096
    assert context_window("openai/scripted") == 32_768


@pytest.mark.parametrize("stream", [False, True])
async def test_transient_errors_are_retried_then_succeed(workspace, stream):
    script = [{"status": 429}, {"status": 500}, {"status": 503}, done("after retries")]
    o = await run_script(workspace, script, stream=stream)
    assert o.result.success and o.result.answer == "after retries"
    assert len(o.requests) == 4 and o.result.iterations == 1
    retries = [d for d in o.of("error") if d.get("retrying")]
    assert len(retries) == 3 and "retry 1" in retries[0]["message"]


@pytest.mark.parametrize("stream", [False, True])
async def test_a_timed_out_request_is_retried(workspace, stream):
    script = [{"content": "too late", "delay": 1.5}, done("after a timeout")]
    o = await run_script(workspace, script, stream=stream, request_timeout=0.3)
    assert o.result.success and o.result.answer == "after a timeout"
    assert len(o.requests) == 2 and o.result.iterations == 1
    retry = [d for d in o.of("error") if d.get("retrying")]
    assert len(retry) == 1 and "retry 1" in retry[0]["message"]


async def test_dropped_stream_is_retried(workspace):
    script = [
        {"content": "a long reply that is cut off in the middle", "drop_stream": True},
        done("second try"),
    ]
    o = await run_script(workspace, script, stream=True)
    assert o.result.answer == "second try" and len(o.requests) == 2


async def test_retries_are_bounded(workspace):
    o = await run_script(workspace, [{"status": 500}] * 4)
    assert o.result.stop_reason == "error" and not o.result.success
    assert "gave up after 4 attempts" in o.result.error and len(o.requests) == 4


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (401, "Incorrect API key provided", "authentication failed"),
        (404, "The model `scripted` does not exist", "was not found"),
        (400, "This model's maximum context length is 8192 tokens", "context window"),
    ],
)
async def test_permanent_errors_end_the_run_without_retrying(workspace, status, message, expected):
    o = await run_script(workspace, [{"status": status, "error": message}, done()])
    assert o.result.stop_reason == "error" and expected in o.result.error
    assert len(o.requests) == 1
    assert o.of("error")[-1]["message"] == o.result.error


async def test_usage_and_cost_for_a_priced_model(workspace):
    # The scripted server answers for a model name litellm has prices for.
    usage = {"prompt_tokens": 1000, "completion_tokens": 500}
    with ScriptedModelServer(
        [{"content": "x", "tool_calls": [call("list_files")], "usage": usage}, done()]
    ) as server:
        settings = scripted_settings(server).replace(model="openai/gpt-4o-mini")
        client = ModelClient(settings)
        reply = await client.complete([{"role": "user", "content": "hi"}], [])
    assert (reply.prompt_tokens, reply.completion_tokens) == (1000, 500)
    assert reply.cost == pytest.approx(1000 * 0.15e-6 + 500 * 0.6e-6, rel=0.01)


@pytest.mark.parametrize("stream", [False, True])
async def test_usage_is_counted_locally_when_the_provider_sends_none(workspace, stream):
    with ScriptedModelServer([{"content": "a short answer", "usage": False}]) as server:
        settings = scripted_settings(server).replace(model="openai/gpt-4o-mini")
        reply = await ModelClient(settings, stream=stream).complete(
            [{"role": "user", "content": "please answer this question briefly"}], []
        )
    # litellm rebuilds a streamed reply's usage itself; a plain reply without usage is counted by the adapter
    assert reply.usage_estimated is not stream
    assert reply.prompt_tokens > 5 and reply.completion_tokens >= 3
    expected = reply.prompt_tokens * 0.15e-6 + reply.completion_tokens * 0.6e-6
    assert reply.cost == pytest.approx(expected, rel=0.01)


async def test_a_streamed_reply_is_the_same_reply_as_an_unstreamed_one():
    """Text, several tool calls in order (their arguments sent in pieces), finish reason, usage and price."""
    args = {"path": "pkg/calc.py", "old_text": "return a - b\n" * 4, "new_text": "return a + b\n" * 4}
    step = {
        "content": "I read the module, then fix the sign in add and check the tests still pass.",
        "tool_calls": [call("read_file", path="pkg/calc.py"), call("edit_file", **args), call("list_files")],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500},
    }
    replies = []
    for stream in (False, True):
        with ScriptedModelServer([step]) as server:
            settings = scripted_settings(server).replace(model="openai/gpt-4o-mini")
            replies.append(
                await ModelClient(settings, stream=stream).complete([{"role": "user", "content": "go"}])
            )
    plain, streamed = replies
    assert streamed.message == plain.message and streamed.content == plain.content
    assert [c.name for c in streamed.tool_calls] == ["read_file", "edit_file", "list_files"]
    assert streamed.tool_calls == plain.tool_calls and streamed.tool_calls[1].arguments == args
    assert (streamed.finish_reason, streamed.prompt_tokens, streamed.completion_tokens) == (
        "tool_calls",
        1000,
        500,
    )
    assert streamed.cost == plain.cost > 0 and not streamed.usage_estimated


async def test_the_token_budget_holds_without_provider_usage(workspace):
    step = {"content": "", "tool_calls": [call("read_file", path="pkg/calc.py")], "usage": False}
    o = await run_script(workspace, [step] * 10, token_budget=600)
    assert o.result.stop_reason == "token_budget" and o.result.iterations < 10
    assert o.of("usage")[0]["estimated"] is True


async def test_unknown_model_costs_nothing(workspace):
    o = await run_script(workspace, [done()])
    assert o.result.cost == 0.0 and o.result.prompt_tokens > 0


async def test_model_error_is_raised_by_the_client():
    with ScriptedModelServer([{"status": 401}]) as server:
        client = ModelClient(scripted_settings(server), retry_base=0.01)
        with pytest.raises(ModelError) as info:
            await client.complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "auth" and not info.value.transient


async def test_context_overflow_mid_run_compacts_once_and_continues(workspace):
    reads = [
        {"content": f"read {i}", "tool_calls": [call("read_file", path="pkg/calc.py")]} for i in range(4)
    ]
    overflow = {
        "status": 400,
        "error": "This model's maximum context length is 8192 tokens. Please reduce the length of the messages.",
    }
    o = await run_script(workspace, [*reads, overflow, done("fits again")])
    assert o.result.success and o.result.answer == "fits again"
    compaction = o.of("compaction")[0]
    assert compaction["removed"] > 0
    assert len(o.requests[-1]["messages"]) < len(o.requests[-2]["messages"])
    assert "[Context compacted:" in o.requests[-1]["messages"][1]["content"]


async def test_a_model_string_without_provider_is_explained(workspace):
    from lsp_agent.agent.loop.run import AgentRun
    from lsp_agent.config import Settings

    result = await AgentRun("t", Settings(model="no-such-model-xyz", api_key="k"), workspace).run()
    assert result.stop_reason == "error" and "prefix the model with its provider" in result.error


async def test_auto_mode_falls_back_to_prompt_tools_when_native_tools_are_refused(workspace):
    script = [
        {"status": 400, "error": "registry.ollama.ai/library/gemma:2b does not support tools"},
        {
            "content": '<THOUGHT>ok</THOUGHT><ACTION>{"name": "task_complete", "arguments": {"summary": "done in prompt mode"}}</ACTION>'
        },
    ]
    o = await run_script(workspace, script)
    assert o.result.success and o.result.answer == "done in prompt mode"
    assert "tools" in o.requests[0] and "tools" not in o.requests[1]
    assert "Available Tools:" in o.requests[1]["messages"][0]["content"]
    assert o.of("error")[0]["kind"] == "tools_unsupported"


@pytest.mark.parametrize(
    "message",
    ["Developer instruction is not enabled for models/gemma-3-12b-it", "System role not supported"],
)
async def test_a_refused_system_role_is_merged_into_the_first_user_message(workspace, message):
    o = await run_script(workspace, [{"status": 400, "error": message}, done("merged")])
    assert o.result.success and o.result.answer == "merged" and len(o.requests) == 2
    assert o.requests[0]["messages"][0]["role"] == "system"
    first = o.requests[1]["messages"][0]
    assert [m["role"] for m in o.requests[1]["messages"]] == ["user"]
    assert (
        first["content"].startswith("You are lsp-agent") and "Task: fix the add function" in first["content"]
    )


async def test_a_system_role_refusal_is_permanent_when_merging_is_off(workspace):
    script = [{"status": 400, "error": "System role not supported"}, done()]
    o = await run_script(workspace, script, merge_system_prompt="never")
    assert o.result.stop_reason == "error" and "System role not supported" in o.result.error
    assert len(o.requests) == 1


async def test_forced_native_mode_does_not_fall_back(workspace):
    o = await run_script(
        workspace, [{"status": 400, "error": "this model does not support tools"}], tool_calling="native"
    )
    assert o.result.stop_reason == "error" and "does not support tools" in o.result.error


async def test_fill_in_the_middle_requests_leave_no_connection_open(caplog):
    """litellm's text completions open an HTTP client per request and never close it ('Unclosed connector' in the
    user's terminal); each infill request gets a client of its own, closed after it."""
    import gc

    with ScriptedModelServer([{"content": "    return a + b\n\n"}] * 3) as server:
        client = ModelClient(scripted_settings(server), retry_base=0.01)
        replies = [
            await client.infill("<|fim_prefix|>def add(a, b):\n<|fim_suffix|><|fim_middle|>", ["\n\n"])
        ]
        replies += [
            await client.infill("<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>", ["\n\n"]) for _ in "ab"
        ]
        requests = server.requests
    gc.collect()  # an unclosed client says so when it is collected
    assert [r.content for r in replies] == ["    return a + b"] * 3
    assert [r["prompt"] for r in requests][0].startswith("<|fim_prefix|>def add") and len(requests) == 3
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage()]
