"""The language server reads the config files: the user's file fills what the editor does not send, and a bad
value in a file is shown naming the file and the key."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from server_editor import start_editor, stop_editor, write_tree


@pytest.mark.asyncio
async def test_the_user_and_workspace_files_reach_the_language_server(tmp_path):
    user_file = tmp_path / "cache" / "home" / ".config" / "lsp-agent" / "config.toml"  # the server's XDG home
    user_file.parent.mkdir(parents=True)
    user_file.write_text('model = "openai/from-user-file"\nmaxIterations = 0\n')
    root = write_tree(
        tmp_path / "proj",
        {"a.py": "A = 1\n", ".lsp-agent/config.toml": 'toolCalling = "prompt"\nallowUnisolatedExec = true\n'},
    )
    editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": {"maxTokens": 999}})
    try:
        status = await editor.wait_index_ready()  # after `initialized` loaded the settings
        assert status["model"] == "openai/from-user-file"
        errors = "\n".join(status["settingsErrors"])
        shown = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
        assert any(f"{user_file}: maxIterations = 0" in m for m in shown)  # shown to the user too
        assert f"{user_file}: maxIterations = 0: expected a positive whole number" in errors
        ws_file = root / ".lsp-agent" / "config.toml"
        assert f"{ws_file}: allowUnisolatedExec is not taken from a workspace file" in errors
        # an edited workspace file is read again when the client reports the change
        ws_file.write_text('model = "openai/from-workspace-file"\n')
        editor.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=editor.uri(".lsp-agent/config.toml"), type=types.FileChangeType.Changed
                    )
                ]
            )
        )
        for _ in range(50):
            status = await editor.command("lspAgent.status")
            if status["model"] == "openai/from-workspace-file":
                break
            await asyncio.sleep(0.1)
        assert status["model"] == "openai/from-workspace-file"
        assert "allowUnisolatedExec" not in "\n".join(status.get("settingsErrors", []))
    finally:
        await stop_editor(editor)
