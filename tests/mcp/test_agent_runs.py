"""MCP tools inside real agent runs, driven by the scripted model through litellm (native and prompt mode)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import BROKEN, DYNAMIC, stdio_config

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.run import RunResult
from lsp_agent.assembly import build_run
from lsp_agent.config import Settings
from lsp_agent.mcp import McpManager
from lsp_agent.testing.scripted_model import ScriptedModelServer

ALLOW_MCP = {"notes__*": "allow", "web__*": "allow"}


def native(name: str, content: str = "", **arguments: Any) -> dict:
    """A script step calling one tool natively."""
    return {"content": content, "tool_calls": [{"name": name, "arguments": arguments}]}


def prompted(name: str, **arguments: Any) -> dict:
    """A script step calling one tool in the prompt-injected <ACTION> format."""
    action = json.dumps({"name": name, "arguments": arguments})
    return {"content": f"<THOUGHT>I should use {name}.</THOUGHT>\n<ACTION>{action}</ACTION>"}


def finish(summary: str, mode: str = "native") -> dict:
    if mode == "prompt":
        return prompted("task_complete", summary=summary)
    return native("task_complete", summary=summary)


def request_text(request: dict) -> str:
    """Everything the model was sent in one request (messages and tool schemas)."""
    return json.dumps(request.get("messages", [])) + json.dumps(request.get("tools", []))


async def run_with_mcp(
    root: Path,
    manager: McpManager,
    script: list[dict],
    *,
    permissions: dict[str, str] | None = None,
    permission: Any = None,
    tool_calling: str = "native",
) -> tuple[RunResult, list[AgentEvent], list[dict], list[str]]:
    """One run built by the shared run assembly with the manager's tools attached."""
    events: list[AgentEvent] = []
    with ScriptedModelServer(script) as model:
        settings = Settings(
            model="openai/scripted",
            api_base=model.base_url,
            api_key="test",
            tool_calling=tool_calling,
            max_iterations=6,
            permissions=dict(permissions or {}),
        )
        run = await build_run(
            "When do deploys go out?", settings, root, sink=events.append, asker=permission, mcp=manager
        )
        result = await run.run()
        requests = list(model.requests)
    errors = [e.data["message"] for e in events if e.kind == "error" and e.data.get("kind") == "mcp"]
    return result, events, requests, errors


def tool_results(events: list[AgentEvent]) -> list[dict]:
    return [e.data for e in events if e.kind == "tool_result"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# demo\n")
    return tmp_path


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_the_agent_calls_an_mcp_tool_and_reads_its_result(root, shared_manager, mode):
    call = native if mode == "native" else prompted
    script = [
        call("notes__lookup_note", topic="deploy"),
        call("web__add", a=2, b=3),
        finish("Deploys go out on Tuesdays (captain Ada).", mode),
    ]
    result, events, requests, errors = await run_with_mcp(
        root, shared_manager, script, permissions=ALLOW_MCP, tool_calling=mode
    )
    assert errors == []
    assert result.success and result.stop_reason == "complete"
    assert "Tuesdays" in result.answer
    first = request_text(requests[0])
    assert "notes__lookup_note" in first and "web__chart" in first  # offered as tools (schema or prompt)
    if mode == "native":
        names = {t["function"]["name"] for t in requests[0]["tools"]}
        assert {"notes__lookup_note", "web__lookup_note", "read_file"} <= names
    else:
        assert "<name>notes__lookup_note</name>" in requests[0]["messages"][0]["content"]
    assert "Deploys go out on Tuesdays; the release captain is Ada." in request_text(requests[1])
    assert [(r["name"], r["ok"]) for r in tool_results(events)] == [
        ("notes__lookup_note", True),
        ("web__add", True),
        ("task_complete", True),
    ]
    assert "5" in request_text(requests[2])


async def test_a_failing_tool_becomes_an_error_observation(root, shared_manager):
    script = [native("web__lookup_note", topic="lunch"), finish("No note about lunch.")]
    result, events, requests, _ = await run_with_mcp(root, shared_manager, script, permissions=ALLOW_MCP)
    assert result.success
    failed = tool_results(events)[0]
    assert failed["name"] == "web__lookup_note" and failed["ok"] is False
    assert "web__lookup_note reported an error" in failed["output"]
    assert "known topics: deploy, oncall" in request_text(requests[1])


async def test_a_server_that_dies_mid_run_gives_a_clear_observation_and_the_run_goes_on(root):
    manager = McpManager([stdio_config("flaky")])
    try:
        script = [
            native("flaky__crash"),
            native("flaky__add", a=1, b=1),
            finish("The notes server crashed; answered without it."),
        ]
        result, events, requests, errors = await run_with_mcp(
            root, manager, script, permissions={"flaky__*": "allow"}
        )
        assert errors == []
        assert result.success and result.stop_reason == "complete"
        crash, after, _ = tool_results(events)
        assert (
            not crash["ok"] and "MCP server 'flaky' is unavailable: stopped while running" in crash["output"]
        )
        assert "crashing on purpose" in crash["output"]
        assert not after["ok"] and "cannot be used in this run" in after["output"]
        assert "stopped while running" in request_text(requests[1])
        assert manager.status()[0]["state"] == "failed"
    finally:
        await manager.aclose()


async def test_a_server_that_fails_to_start_is_reported_and_the_run_goes_on_without_it(root, shared_manager):
    manager = McpManager([stdio_config("broken", BROKEN)])
    try:
        script = [native("read_file", path="README.md"), finish("Read the README.")]
        result, _, requests, errors = await run_with_mcp(root, manager, script)
        assert len(errors) == 1 and "'broken'" in errors[0] and "missing NOTES_TOKEN" in errors[0]
        assert result.success
        names = {t["function"]["name"] for t in requests[0]["tools"]}
        assert "read_file" in names and not any(n.startswith("broken__") for n in names)
        assert manager.status()[0]["state"] == "failed"
    finally:
        await manager.aclose()


async def test_mcp_tools_are_denied_without_an_asker_or_a_rule(root, shared_manager):
    script = [native("notes__lookup_note", topic="deploy"), finish("I could not read the notes.")]
    result, events, requests, _ = await run_with_mcp(root, shared_manager, script)
    assert result.success
    denied = tool_results(events)[0]
    assert not denied["ok"] and denied["output"].startswith("Permission denied: notes__lookup_note")
    assert "Tuesdays" not in request_text(requests[1])
    permission = next(e.data for e in events if e.kind == "permission")
    assert (permission["decision"], permission["source"]) == ("denied", "no asker")


async def test_the_user_is_asked_and_settings_patterns_decide(root, shared_manager):
    asked: list[tuple[str, dict, str]] = []

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        asked.append((tool, arguments, reason))
        return "deny"

    script = [
        native("web__lookup_note", topic="deploy"),
        native("notes__lookup_note", topic="oncall"),
        native("notes__add", a=1, b=2),
        finish("done"),
    ]
    result, events, _, _ = await run_with_mcp(
        root,
        shared_manager,
        script,
        permissions={"notes__*": "allow", "notes__add": "deny"},
        permission=ask,
    )
    assert result.success
    web, notes, add, _ = tool_results(events)
    assert asked == [("web__lookup_note", {"topic": "deploy"}, "reaches outside the workspace")]
    assert not web["ok"] and "the user declined" in web["output"]
    assert notes["ok"] and "Monday at 09:00 UTC" in notes["output"]
    assert not add["ok"] and "the permissions setting denies it" in add["output"]


@pytest.mark.parametrize("handshake", ["auto", "legacy"])
async def test_a_tool_list_change_reaches_the_next_run(root, monkeypatch, handshake):
    """tools/list_changed (a listen event on 2026-07-28, a notification before) re-lists the tools at once."""
    import asyncio

    import lsp_agent.mcp.connection as connection

    monkeypatch.setattr(connection, "CONNECT_MODE", handshake)
    manager = McpManager([stdio_config("dyn", DYNAMIC)])
    allow = {"dyn__*": "allow"}
    try:
        script = [native("dyn__unlock"), finish("unlocked")]
        result, events, requests, errors = await run_with_mcp(root, manager, script, permissions=allow)
        assert errors == [] and result.success
        assert "dyn__secret" not in request_text(requests[0])
        assert tool_results(events)[0]["output"] == "unlocked: a new tool is available"
        for _ in range(100):  # no run in between: only the server's notice can refresh the list
            if "secret" in manager.status()[0]["tools"]:
                break
            await asyncio.sleep(0.05)
        assert manager.status()[0]["tools"] == ["unlock", "secret"]
        assert manager._connections["dyn"].tools_changed == 1
        script = [native("dyn__secret"), finish("open")]
        result, events, requests, errors = await run_with_mcp(root, manager, script, permissions=allow)
        assert "dyn__secret" in request_text(requests[0])
        assert tool_results(events)[0]["output"] == "the vault is open"
    finally:
        await manager.aclose()
