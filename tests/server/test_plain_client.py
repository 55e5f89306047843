"""A client without documentChanges (like Neovim 0.11): plain `changes`, minimal TextEdits, no progress."""

from __future__ import annotations

import pytest
from lsprotocol import types
from server_editor import plain_capabilities, scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

BIG = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(40))


@pytest.mark.asyncio
async def test_plain_changes_client_gets_minimal_text_edits(tmp_path):
    root = write_tree(tmp_path / "proj", {"big.py": BIG, "gone.py": "G = 1\n"})
    script = [
        {
            "content": "",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "big.py",
                        "old_text": "return x * 20\n",
                        "new_text": "return x * 20  # twenty\n",
                    },
                }
            ],
        },
        {
            "content": "",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "added.py", "content": "A = 1\n"}}],
        },
        {"content": "", "tool_calls": [{"name": "delete_file", "arguments": {"path": "gone.py"}}]},
        {
            "content": "",
            "tool_calls": [{"name": "task_complete", "arguments": {"summary": "Comment f20, add added.py"}}],
        },
    ]
    with ScriptedModelServer(script) as model:
        settings = scripted_settings(model)
        editor = await start_editor(
            root, tmp_path / "cache", init_options={"lspAgent": settings}, capabilities=plain_capabilities()
        )
        try:
            status = await editor.wait_index_ready()
            assert status["index"]["files"] == 2
            uri = editor.open("big.py")
            run_id = await editor.ask("comment f20")
            done = await editor.wait_event(run_id, "done")
            assert done["pending"] is True
            assert editor.client.progress_reports == {}  # the client never offered progress
            result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
            assert result["applied"] is True and sorted(result["files"]) == ["added.py", "big.py"]
            (refusal,) = result["refused"]
            assert "gone.py" in refusal and "delete it yourself" in refusal
            edit = editor.applied[-1]
            assert edit.document_changes is None and edit.change_annotations is None
            (big_edit,) = edit.changes[uri]
            assert isinstance(big_edit, types.TextEdit) and (
                big_edit.range.start.line,
                big_edit.range.end.line,
            ) == (61, 62)
            assert editor.text(uri) == BIG.replace("return x * 20\n", "return x * 20  # twenty\n")
            assert (root / "added.py").read_text() == "A = 1\n"
            assert (root / "gone.py").exists()
        finally:
            await stop_editor(editor)
