"""The ReAct loop end to end through the scripted server and litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import json
import threading
import time

from agent_support import call, done, run_script, scripted_settings

from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.tools.registry import Tool, default_registry

ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


async def test_native_read_edit_complete_gives_a_proposal_and_leaves_disk_alone(workspace):
    script = [
        {"content": "Read the module.", "tool_calls": [call("read_file", path="pkg/calc.py")]},
        {
            "content": "Fix it.",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
        },
        done("add now adds"),
    ]
    o = await run_script(workspace, script)
    r = o.result
    assert (r.success, r.stop_reason, r.answer, r.iterations) == (True, "complete", "add now adds", 3)
    assert r.prompt_tokens > 0 and r.completion_tokens > 0 and r.messages == 8
    assert r.proposal is not None
    assert "-    return a - b\n+    return a + b" in r.proposal.unified_diff()
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL
    # Native mode: tools go to the API, results come back as tool messages with the call ids.
    assert [t["function"]["name"] for t in o.requests[0]["tools"]][-1] == "task_complete"
    tool_msg = o.requests[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_0_0"
    assert "2:     return a - b" in tool_msg["content"]
    assert o.kinds[0] == "start" and o.kinds[-1] == "done" and "proposal" in o.kinds
    assert [d["name"] for d in o.of("tool_call")] == ["read_file", "edit_file", "task_complete"]
    assert o.of("thought")[0]["text"] == "Read the module."


async def test_streamed_replies(workspace):
    script = [{"content": "look", "tool_calls": [call("list_files")]}, done("listed")]
    o = await run_script(workspace, script, stream=True)
    assert o.result.success and o.result.answer == "listed"
    assert all(req.get("stream") for req in o.requests)
    assert "pkg/" in o.of("tool_result")[0]["output"]


async def test_prompt_mode_thought_action(workspace):
    script = [
        {
            "content": '<THOUGHT>Find add.</THOUGHT>\n<ACTION>{"name": "search_text", "arguments": {"pattern": "def add"}}</ACTION>'
        },
        {
            "content": '<THOUGHT>Done.</THOUGHT><ACTION>{"name": "task_complete", "arguments": {"summary": "found"}}</ACTION>'
        },
    ]
    o = await run_script(workspace, script, tool_calling="prompt")
    assert o.result.success and o.result.answer == "found"
    first = o.requests[0]
    assert "tools" not in first
    system = first["messages"][0]["content"]
    assert (
        "Available Tools:" in system and "<tool>\n<name>read_file</name>" in system and "<ACTION>" in system
    )
    observation = o.requests[1]["messages"][-1]
    assert observation["role"] == "user" and "pkg/calc.py:1:def add(a, b):" in observation["content"]
    assert o.of("thought")[0]["text"] == "Find add."


async def test_prompt_mode_every_form_in_one_run(workspace):
    script = [
        {"content": '<tool_call>{"name": "list_files", "arguments": {}}</tool_call>'},
        {"content": '```tool_call\n{"name": "get_file_info", "arguments": {"path": "README.md"}}\n```'},
        {"content": '{"thought": "read", "action": "read_file", "action_input": {"path": "README.md"}}'},
        {
            "content": "<THOUGHT>t</THOUGHT><ACTION><tool_name>find_symbol</tool_name><name>add</name></ACTION>"
        },
        {"content": "The README describes a calculator."},
    ]
    o = await run_script(workspace, script, tool_calling="prompt")
    assert [d["name"] for d in o.of("tool_call")] == [
        "list_files",
        "get_file_info",
        "read_file",
        "find_symbol",
    ]
    assert (o.result.stop_reason, o.result.answer) == ("no_tool_call", "The README describes a calculator.")
    assert o.result.success


async def test_merge_system_prompt_into_first_user_message(workspace):
    o = await run_script(workspace, [{"content": "nothing to do"}], merge_system_prompt="always")
    messages = o.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert (
        messages[0]["content"].startswith("You are lsp-agent")
        and "Task: fix the add function" in messages[0]["content"]
    )


async def test_auto_mode_uses_prompt_injection_for_gemma(workspace):
    script = [{"content": "plain answer"}]
    with ScriptedModelServer(script) as server:
        settings = scripted_settings(server).replace(model="openai/gemma-3-12b-it")
        client = ModelClient(settings)
        assert (client.tool_mode, client.merge_system) == ("prompt", True)
        result = await AgentRun("hi", settings, workspace, model_client=client).run()
    assert result.answer == "plain answer"
    assert "tools" not in server.requests[0] and server.requests[0]["messages"][0]["role"] == "user"


async def test_native_model_writing_a_text_tool_call(workspace):
    script = [
        {
            "content": 'I will read it.\n<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>'
        },
        done(),
    ]
    o = await run_script(workspace, script)
    assert o.of("tool_result")[0]["ok"] and "A calculator." in o.of("tool_result")[0]["output"]
    assert o.requests[1]["messages"][-1]["role"] == "user"


async def test_several_tool_calls_in_one_step(workspace):
    script = [
        {
            "content": "both",
            "tool_calls": [call("read_file", path="README.md"), call("read_file", path="pkg/calc.py")],
        },
        done(),
    ]
    o = await run_script(workspace, script)
    tool_messages = [m for m in o.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0_0", "call_0_1"]
    assert o.result.iterations == 2


async def test_malformed_prompt_reply_gets_a_correction_then_recovers(workspace):
    script = [
        {"content": "<tool_call>{name: read_file, args}</tool_call>"},
        {"content": '<ACTION>{"name": "task_complete", "arguments": {"summary": "ok"}}</ACTION>'},
    ]
    o = await run_script(workspace, script, tool_calling="prompt")
    correction = o.requests[1]["messages"][-1]["content"]
    assert "could not be parsed" in correction and '<ACTION>{"name": "tool_name"' in correction
    assert "read_file" in correction  # lists the available tools
    assert o.result.success and o.result.answer == "ok"
    assert any(d.get("kind") == "parse" for d in o.of("error"))


async def test_unknown_tool_and_bad_arguments_become_observations(workspace):
    script = [
        {"content": "", "tool_calls": [call("launch_rockets", target="moon")]},
        {"content": "", "tool_calls": [{"name": "read_file", "arguments": "{not json"}]},
        {"content": "", "tool_calls": [call("read_file")]},
        done(),
    ]
    o = await run_script(workspace, script)
    results = o.of("tool_result")
    assert not results[0]["ok"] and "unknown tool 'launch_rockets'" in results[0]["output"]
    assert "read_file" in results[0]["output"]
    assert not results[1]["ok"] and not results[2]["ok"] and "path" in results[2]["output"]
    assert o.result.success


async def test_edit_failure_and_path_escape_are_observations(workspace):
    script = [
        {
            "content": "",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="return a / b", new_text="x")],
        },
        {"content": "", "tool_calls": [call("read_file", path="../../etc/passwd")]},
        {"content": "", "tool_calls": [call("write_file", path="/tmp/elsewhere.py", content="x")]},
        done(),
    ]
    o = await run_script(workspace, script)
    edit, escape, write = o.of("tool_result")[:3]
    assert not edit["ok"] and "return a - b" in edit["output"]  # the closest candidate is shown
    assert not escape["ok"] and "outside the workspace" in escape["output"]
    assert not write["ok"] and "outside the workspace" in write["output"]
    assert o.result.proposal is None


async def test_iteration_limit(workspace):
    script = [{"content": "again", "tool_calls": [call("list_files")]} for _ in range(3)]
    o = await run_script(workspace, script, max_iterations=3)
    assert (o.result.success, o.result.stop_reason, o.result.iterations) == (False, "max_iterations", 3)
    assert o.server.remaining == 0


async def test_token_budget(workspace):
    step = {
        "content": "more",
        "tool_calls": [call("list_files")],
        "usage": {"prompt_tokens": 400, "completion_tokens": 100},
    }
    o = await run_script(workspace, [step, step, step, step], token_budget=1000)
    assert (o.result.stop_reason, o.result.iterations, o.result.success) == ("token_budget", 2, False)
    assert o.result.prompt_tokens + o.result.completion_tokens == 1000


async def test_syntax_errors_are_reported_once_before_finishing(workspace):
    script = [
        {
            "content": "",
            "tool_calls": [call("write_file", path="pkg/new.py", content="def broken(:\n    pass\n")],
        },
        done("first try"),
        {
            "content": "",
            "tool_calls": [call("write_file", path="pkg/new.py", content="def fixed():\n    pass\n")],
        },
        done("fixed"),
    ]
    o = await run_script(workspace, script)
    report = o.requests[2]["messages"][-1]
    assert (
        report["role"] == "tool"
        and "pkg/new.py:1" in report["content"]
        and "syntax errors" in report["content"]
    )
    assert o.result.answer == "fixed" and o.result.iterations == 4
    assert o.result.proposal.changes[0].new_text == "def fixed():\n    pass\n"
    assert o.of("proposal")[0]["syntaxErrors"] == []


async def test_syntax_errors_reported_only_once(workspace):
    script = [
        {"content": "", "tool_calls": [call("write_file", path="bad.py", content="x = (\n")]},
        done("try"),
        done("as is"),
    ]
    o = await run_script(workspace, script)
    assert o.result.answer == "as is" and o.result.stop_reason == "complete"
    assert o.of("proposal")[0]["syntaxErrors"][0].startswith("bad.py:1:")


def _exec_registry(calls: list[str]):
    registry = default_registry()

    def run_tests(ctx, target: str = "all") -> str:
        calls.append(target)
        return f"ran {target}: 3 passed"

    registry.register(
        Tool(
            "run_tests",
            "Run the tests.",
            {"type": "object", "properties": {"target": {"type": "string"}}},
            run_tests,
            "exec",
        )
    )
    return registry


async def test_exec_tool_without_asker_is_denied(workspace):
    ran: list[str] = []
    script = [{"content": "", "tool_calls": [call("run_tests", target="unit")]}, done()]
    o = await run_script(workspace, script, registry=_exec_registry(ran))
    assert ran == []
    result = o.of("tool_result")[0]
    assert not result["ok"] and "Permission denied" in result["output"] and "--allow-exec" in result["output"]
    assert o.of("permission")[0]["decision"] == "denied"


async def test_session_grant_is_asked_once(workspace):
    ran: list[str] = []
    asked: list[tuple[str, dict]] = []

    async def asker(tool, arguments, reason):
        asked.append((tool, arguments))
        return "session"

    script = [
        {"content": "", "tool_calls": [call("run_tests", target="a")]},
        {"content": "", "tool_calls": [call("run_tests", target="b")]},
        done(),
    ]
    o = await run_script(workspace, script, registry=_exec_registry(ran), permission=asker)
    assert ran == ["a", "b"] and asked == [("run_tests", {"target": "a"})]
    assert o.of("tool_result")[1]["output"] == "ran b: 3 passed"


async def test_settings_permissions_short_circuit_the_asker(workspace):
    ran: list[str] = []

    async def asker(tool, arguments, reason):
        raise AssertionError("must not ask")

    script = [{"content": "", "tool_calls": [call("run_tests")]}, done()]
    o = await run_script(
        workspace, script, registry=_exec_registry(ran), permission=asker, permissions={"run_tests": "deny"}
    )
    assert ran == [] and "permissions setting denies" in o.of("tool_result")[0]["output"]
    o = await run_script(workspace, script, registry=_exec_registry(ran), permissions={"run_tests": "allow"})
    assert ran == ["all"]


async def test_session_memory_reaches_the_follow_up_task(workspace):
    session = Session("s1")
    await run_script(workspace, [done("explained add")], task="explain add", session=session)
    first = session.exchanges[0].run_id
    session.record(f"user applied the proposal of run {first}")
    o = await run_script(workspace, [done()], task="now fix it", session=session)
    task_msg = o.requests[0]["messages"][1]["content"]
    assert (
        "Earlier in this conversation" in task_msg
        and "explain add" in task_msg
        and "explained add" in task_msg
    )
    assert f"Then: user applied the proposal of run {first}" in task_msg and task_msg.endswith(
        "Task: now fix it"
    )
    assert [e.task for e in session.exchanges] == ["explain add", "now fix it"]


async def test_editor_context_is_in_the_task_message(workspace):
    o = await run_script(workspace, [{"content": "ok"}], context="pkg/calc.py lines 1-2:\ndef add(a, b):")
    assert "Context from the editor:\npkg/calc.py lines 1-2" in o.requests[0]["messages"][1]["content"]


async def test_transcript_records_requests_replies_and_tools(workspace, tmp_path):
    path = tmp_path / "t.jsonl"
    script = [{"content": "r", "tool_calls": [call("read_file", path="README.md")]}, done()]
    o = await run_script(workspace, script, transcript=str(path))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    types = [r["type"] for r in records]
    assert types == ["start", "request", "reply", "tool", "request", "reply", "tool", "done"]
    assert records[1]["messages"][0]["role"] == "system" and records[1]["tools"]
    assert records[4]["first_index"] == 2 and records[4]["messages"][-1]["role"] == "tool"
    assert (
        records[3]["name"] == "read_file"
        and records[3]["seconds"] >= 0
        and "A calculator" in records[3]["output"]
    )
    assert records[-1]["stop_reason"] == "complete" and o.result.success


async def test_cancel_aborts_an_in_flight_request_quickly(workspace):
    script = [{"content": "", "tool_calls": [call("list_files")]}, {"content": "late", "delay": 20}]
    with ScriptedModelServer(script) as server:
        settings = scripted_settings(server)
        run = AgentRun("task", settings, workspace, model_client=ModelClient(settings))
        task = asyncio.create_task(run.run())
        while len(server.requests) < 2:
            await asyncio.sleep(0.02)
        start = time.monotonic()
        threading.Thread(target=run.cancel).start()
        result = await asyncio.wait_for(task, 5)
        elapsed = time.monotonic() - start
    assert result.stop_reason == "cancelled" and not result.success
    assert elapsed < 1.0
    assert result.iterations == 1


async def test_cancel_before_start(workspace):
    with ScriptedModelServer([done()]) as server:
        settings = scripted_settings(server)
        run = AgentRun("task", settings, workspace, model_client=ModelClient(settings))
        run.cancel()
        result = await run.run()
    assert result.stop_reason == "cancelled" and server.requests == []


async def test_no_model_configured_is_a_clear_error(workspace):
    from lsp_agent.config import Settings

    events = []
    result = await AgentRun("task", Settings(), workspace, sink=events.append).run()
    assert result.stop_reason == "error" and "--model" in result.error and "LSP_AGENT_MODEL" in result.error
    assert events[-1].kind == "done"


async def test_finishing_on_the_step_that_crosses_the_budget_counts_as_complete(workspace):
    usage = {"prompt_tokens": 900, "completion_tokens": 200}
    o = await run_script(workspace, [{**done("just made it"), "usage": usage}], token_budget=1000)
    assert (o.result.stop_reason, o.result.answer, o.result.success) == ("complete", "just made it", True)


async def test_an_empty_reply_gets_one_nudge(workspace):
    o = await run_script(workspace, [{"content": ""}, {"content": ""}])
    assert "Your reply was empty" in o.requests[1]["messages"][-1]["content"]
    assert (o.result.stop_reason, o.result.iterations) == ("no_tool_call", 2)


async def test_a_failing_asker_denies(workspace):
    ran: list[str] = []

    async def asker(tool, arguments, reason):
        raise RuntimeError("editor went away")

    script = [{"content": "", "tool_calls": [call("run_tests")]}, done()]
    o = await run_script(workspace, script, registry=_exec_registry(ran), permission=asker)
    assert ran == [] and not o.of("tool_result")[0]["ok"] and o.result.success


async def test_repeating_the_same_failing_call_gets_a_hint(workspace):
    bad = {"content": "", "tool_calls": [call("read_file", path="missing.py")]}
    o = await run_script(workspace, [bad, bad, done()])
    first = o.requests[1]["messages"][-1]["content"]
    second = o.requests[2]["messages"][-1]["content"]
    assert "failed 2 times" not in first and "not found" in first
    assert "This exact call has now failed 2 times" in second


async def test_cancel_aborts_a_slow_tool(workspace):
    registry = default_registry()
    started = asyncio.Event()

    async def slow(ctx) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    registry.register(Tool("slow_tool", "Takes long.", {"type": "object", "properties": {}}, slow))
    with ScriptedModelServer([{"content": "", "tool_calls": [call("slow_tool")]}]) as server:
        settings = scripted_settings(server)
        run = AgentRun("task", settings, workspace, registry=registry, model_client=ModelClient(settings))
        task = asyncio.create_task(run.run())
        await asyncio.wait_for(started.wait(), 10)
        start = time.monotonic()
        run.cancel()
        result = await asyncio.wait_for(task, 5)
    assert result.stop_reason == "cancelled" and time.monotonic() - start < 1.0
