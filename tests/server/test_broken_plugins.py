"""When the MCP and sandbox plugins cannot load, the server says so once and keeps indexing and running asks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

SCENARIO = [sys.executable, str(Path(__file__).with_name("broken_plugins_server.py"))]


@pytest.mark.asyncio
async def test_a_broken_plugin_install_costs_only_its_tools(tmp_path):
    root = write_tree(tmp_path / "proj", {"a.py": "def alpha():\n    return 1\n"})
    finish = {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "ok"}}]}
    with ScriptedModelServer([finish]) as model:
        settings = scripted_settings(model)
        editor = await start_editor(
            root, tmp_path / "cache", init_options={"lspAgent": settings}, command=SCENARIO
        )
        try:
            status = await editor.wait_index_ready()
            assert status["index"]["ready"] and status["index"]["files"] == 1
            assert "simulated broken install" in status["mcp"]["error"]
            errors = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
            assert len([m for m in errors if "MCP servers and code execution are unavailable" in m]) == 1
            run_id = await editor.ask("say ok")
            assert (await editor.wait_event(run_id, "done"))["stopReason"] == "complete"
            tools = {t["function"]["name"] for t in model.requests[-1]["tools"]}
            assert "read_file" in tools and "run_python" not in tools
        finally:
            await stop_editor(editor)
