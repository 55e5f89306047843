"""lspAgent.undoApply through the real protocol: the last applyEdits is reverted exactly, or refused untouched."""

from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

pytestmark = pytest.mark.asyncio(loop_scope="module")

APP = "def greet(name):\n    return 'hi ' + name\n\n\nVALUE = 1\n"
FILES = {"app.py": APP, "util.py": "X = 1\n"}


def step(name: str, **arguments: str) -> dict:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "proj", FILES)
    ed = await start_editor(
        root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": scripted_settings(model)}
    )
    yield ed
    await stop_editor(ed)


async def run_and_apply(editor, model, task: str) -> str:
    """A run that edits app.py (open, with unsaved text) and creates new.py; applied with applyEdits."""
    model.add_steps(
        [
            step("edit_file", path="app.py", old_text="VALUE = 1", new_text="VALUE = 2"),
            step("write_file", path="new.py", content="Z = 3\n"),
            step("task_complete", summary=task),
        ]
    )
    run_id = await editor.ask(task)
    await editor.wait_event(run_id, "done")
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"], result
    return run_id


async def test_undo_restores_the_exact_pre_apply_text_and_removes_created_files(editor, model):
    uri = editor.open("app.py", APP + "# unsaved line\n")
    run_id = await run_and_apply(editor, model, "bump value")
    assert editor.text(uri) == (APP + "# unsaved line\n").replace("VALUE = 1", "VALUE = 2")
    assert (editor.root / "new.py").read_text() == "Z = 3\n"

    result = await editor.command("lspAgent.undoApply")
    assert result == {"runId": run_id, "undone": True, "files": ["app.py", "new.py"]}
    assert editor.text(uri) == APP + "# unsaved line\n"
    assert not (editor.root / "new.py").exists()
    assert [e["files"] for e in editor.run_events(run_id, "undo")] == [["app.py", "new.py"]]
    editor.close(uri)

    with pytest.raises(JsonRpcException, match="nothing to undo"):
        await editor.command("lspAgent.undoApply")


async def test_undo_refuses_when_a_file_changed_since_the_apply_and_changes_nothing(editor, model):
    uri = editor.open("app.py")
    await run_and_apply(editor, model, "bump value again")
    edited = editor.text(uri) + "# typed after the apply\n"
    editor.change(uri, edited)
    applied_edits = len(editor.applied)

    with pytest.raises(JsonRpcException, match=r"undo refused, nothing was changed: app.py: changed since"):
        await editor.command("lspAgent.undoApply")
    assert len(editor.applied) == applied_edits  # no edit was sent
    assert editor.text(uri) == edited and (editor.root / "new.py").read_text() == "Z = 3\n"

    editor.change(uri, edited.replace("# typed after the apply\n", ""))  # the user takes their line back
    result = await editor.command("lspAgent.undoApply")
    assert result["undone"] and editor.text(uri) == APP
    assert not (editor.root / "new.py").exists()
    editor.close(uri)


async def test_undo_reverts_an_apply_code_action_too(editor, model):
    uri = editor.open("util.py")
    model.add_steps(
        [
            step("edit_file", path="util.py", old_text="X = 1", new_text="X = 10"),
            step("task_complete", summary="x"),
        ]
    )
    run_id = await editor.ask("ten")
    await editor.wait_event(run_id, "done")
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    apply = next(a for a in actions if a.title.startswith("Apply agent edit"))
    editor.apply(apply.edit)  # the editor applies the action's edit itself and sends didChange
    assert editor.text(uri) == "X = 10\n"
    await editor.wait_edits(run_id, 1)

    result = await editor.command("lspAgent.undoApply")
    assert result == {"runId": run_id, "undone": True, "files": ["util.py"]}
    assert editor.text(uri) == "X = 1\n"
    editor.close(uri)


async def test_undo_removes_the_directories_the_apply_created_once_empty(editor, model):
    (editor.root / "existing").mkdir()
    model.add_steps(
        [
            step("write_file", path="docs/guide/intro.md", content="# intro\n"),
            step("write_file", path="existing/deep/more.md", content="more\n"),
            step("write_file", path="notes/one.md", content="one\n"),
            step("task_complete", summary="docs"),
        ]
    )
    run_id = await editor.ask("write docs")
    await editor.wait_event(run_id, "done")
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"], result
    assert (editor.root / "docs" / "guide" / "intro.md").read_text() == "# intro\n"
    (editor.root / "notes" / "mine.md").write_text("the user's own\n")  # added after the apply

    result = await editor.command("lspAgent.undoApply")
    assert result["undone"] and sorted(result["files"]) == [
        "docs/guide/intro.md",
        "existing/deep/more.md",
        "notes/one.md",
    ]
    assert not (editor.root / "docs").exists()  # created by the apply, empty after the undo
    assert (editor.root / "existing").is_dir() and not (editor.root / "existing" / "deep").exists()
    assert (editor.root / "notes" / "mine.md").read_text() == "the user's own\n"
    assert not (editor.root / "notes" / "one.md").exists()
