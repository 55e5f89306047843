"""MCP through the real language server: lazy start on the first run, showMessage, lspAgent.status, shutdown."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import BROKEN, NOTES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from scripted_editor import tool_step  # noqa: E402
from server_editor import scripted_settings, start_editor, stop_editor, write_tree  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.asyncio
async def test_editor_settings_servers_serve_runs_and_stop_at_shutdown(tmp_path: Path):
    root = write_tree(tmp_path / "proj", {"a.py": "A = 1\n"})
    pids = tmp_path / "pids"
    with ScriptedModelServer([]) as model:
        settings = {
            **scripted_settings(model),
            "permissions": {"allow": ["notes__*"]},
            "mcpStartupTimeout": 60,  # a loaded CI machine may take more than the default 10 s to start Python
            "mcpServers": {
                "notes": {
                    "command": sys.executable,
                    "args": [str(NOTES)],
                    "env": {"NOTES_PID_FILE": str(pids)},
                },
                "broken": {"command": sys.executable, "args": [str(BROKEN)]},
            },
        }
        editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": settings})
        try:
            status = await editor.command("lspAgent.status")
            for _ in range(100):  # the server reads its settings just after initialized
                if status.get("model"):
                    break
                await asyncio.sleep(0.05)
                status = await editor.command("lspAgent.status")
            before = status["mcp"]
            assert {row["name"]: row["state"] for row in before} == {"notes": "idle", "broken": "idle"}
            assert not pids.exists()  # nothing starts before a run needs it

            model.add_steps(
                [
                    tool_step("notes__lookup_note", topic="deploy"),
                    tool_step("task_complete", summary="Tuesdays"),
                ]
            )
            run_id = await editor.ask("when do deploys go out?")
            await editor.wait_event(run_id, "done")
            (result,) = [
                e for e in editor.run_events(run_id, "tool_result") if e["name"] == "notes__lookup_note"
            ]
            assert result["ok"] and "Deploys go out on Tuesdays" in result["output"]
            assert "Deploys go out on Tuesdays" in str(model.requests[-1]["messages"])

            shown = [m.message for m in editor.client.messages]
            assert any("'broken'" in m and "missing NOTES_TOKEN" in m for m in shown), shown

            rows = {row["name"]: row for row in (await editor.command("lspAgent.status"))["mcp"]}
            assert rows["notes"]["state"] == "ready" and "lookup_note" in rows["notes"]["tools"]
            assert rows["broken"]["state"] == "failed" and "missing NOTES_TOKEN" in rows["broken"]["error"]

            # a second run reuses the running server and does not repeat the error message
            model.add_steps([tool_step("notes__add", a=2, b=2), tool_step("task_complete", summary="4")])
            run_id = await editor.ask("add")
            await editor.wait_event(run_id, "done")
            (added,) = [e for e in editor.run_events(run_id, "tool_result") if e["name"] == "notes__add"]
            assert added["ok"] and added["output"] == "4"
            assert len(pids.read_text().split()) == 1
            assert len([m for m in editor.client.messages if "'broken'" in m.message]) == 1
        finally:
            await stop_editor(editor)
    pid = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _alive(pid), "the MCP server outlived the language server"
