"""Settings the editor does not send come from the server's environment and the workspace .env."""

from __future__ import annotations

import pytest
from server_editor import start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.mark.asyncio
async def test_environment_and_dotenv_fill_the_gaps_of_the_editor_settings(tmp_path):
    root = write_tree(
        tmp_path / "proj",
        {"a.py": "A = 1\n", ".env": "LSP_AGENT_MODEL=openai/from-dotenv\n"},
    )
    finish = {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "ok"}}]}
    with ScriptedModelServer([finish]) as model:
        editor = await start_editor(
            root,
            tmp_path / "cache",
            init_options={"lspAgent": {"toolCalling": "native"}},
            env={"LSP_AGENT_API_BASE": model.base_url, "LSP_AGENT_API_KEY": "from-env"},
        )
        try:
            status = await editor.command("lspAgent.status")
            assert status["model"] == "openai/from-dotenv" and "settingsErrors" not in status
            run_id = await editor.ask("say ok")
            done = await editor.wait_event(run_id, "done")
            assert done["stopReason"] == "complete"  # the run reached the scripted model at the env's apiBase
            (request,) = model.requests
            assert (
                request["model"] == "from-dotenv" and request["tools"]
            )  # native tool calling from the editor
        finally:
            await stop_editor(editor)
