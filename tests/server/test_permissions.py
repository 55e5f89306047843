"""Guarded tools ask through window/showMessageRequest: Allow once, Allow for this session, Deny, no answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

SCENARIO = [sys.executable, str(Path(__file__).with_name("guarded_tool_server.py"))]


def stamp(text: str) -> dict:
    return {"content": "", "tool_calls": [{"name": "stamp", "arguments": {"text": text}}]}


def finish() -> dict:
    return {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "stamped"}}]}


@pytest.mark.asyncio
async def test_guarded_tool_asks_the_user_and_follows_the_answer(tmp_path):
    root = write_tree(tmp_path / "proj", {"a.py": "A = 1\n"})
    with ScriptedModelServer([]) as model:
        settings = scripted_settings(model)
        editor = await start_editor(
            root, tmp_path / "cache", init_options={"lspAgent": settings}, command=SCENARIO
        )
        try:

            async def run(answer: str | None, steps: list[dict], session: str | None = None) -> list[dict]:
                editor.permission_answer = answer
                editor.permission_prompts.clear()
                model.add_steps(steps)
                extra = {"sessionId": session} if session else {}
                run_id = await editor.ask("stamp things", **extra)
                await editor.wait_event(run_id, "done")
                return [e for e in editor.run_events(run_id, "tool_result") if e["name"] == "stamp"]

            (once,) = await run("Allow once", [stamp("one"), finish()])
            assert once["ok"] and "stamped one" in once["output"]
            assert len(editor.permission_prompts) == 1 and "stamp" in editor.permission_prompts[0]

            results = await run("Allow for this session", [stamp("two"), stamp("three"), finish()], "s1")
            assert [r["ok"] for r in results] == [True, True]
            assert len(editor.permission_prompts) == 1  # the session grant covers the second call

            (later,) = await run("Deny", [stamp("again"), finish()], "s1")  # a follow-up ask, same session
            assert later["ok"] and editor.permission_prompts == []
            (other,) = await run("Deny", [stamp("elsewhere"), finish()], "s2")  # another session asks again
            assert len(editor.permission_prompts) == 1 and "stamped elsewhere" not in other["output"]

            (denied,) = await run("Deny", [stamp("four"), finish()])
            assert not denied["ok"] or "Permission denied" in denied["output"]
            assert "stamped four" not in denied["output"]

            (dismissed,) = await run(None, [stamp("five"), finish()])
            assert "stamped five" not in dismissed["output"] and "Permission denied" in dismissed["output"]

            # the "always" list in the settings: allowed or denied without a prompt
            editor.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(
                    settings={"lspAgent": {"permissions": {"allow": ["stamp"]}}}
                )
            )
            (always,) = await run(None, [stamp("six"), finish()])
            assert always["ok"] and "stamped six" in always["output"] and editor.permission_prompts == []
            editor.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"lspAgent": {"permissions": {"stamp": "deny"}}})
            )
            (never,) = await run("Allow once", [stamp("seven"), finish()])
            assert "stamped seven" not in never["output"] and "permissions setting" in never["output"]
            assert editor.permission_prompts == []
        finally:
            await stop_editor(editor)
