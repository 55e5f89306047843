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


async def code_actions_at(editor, uri: str, line: int) -> list:
    """The code actions a cursor at the start of `line` gets."""
    cursor = types.Position(line=line, character=0)
    return await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=cursor, end=cursor),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


async def test_undo_of_a_code_action_restores_what_was_typed_after_an_earlier_offer(editor, model):
    """Offers are noted per document text: the same edit offered again after the user typed (elsewhere) undoes
    to the typed text, not to the text of the earlier offer."""
    (editor.root / "calc.py").write_text("A = 1\nB = 2\nC = 3\nD = 4\nE = 5\n")
    uri = editor.open("calc.py")
    model.add_steps(
        [
            step("edit_file", path="calc.py", old_text="A = 1", new_text="A = 10"),
            step("task_complete", summary="a ten"),
        ]
    )
    run_id = await editor.ask("a ten")
    await editor.wait_event(run_id, "done")
    first = next(a for a in await code_actions_at(editor, uri, 0) if a.title.startswith("Apply agent edit"))

    typed = "A = 1\nB = 2\nC = 3\nD = 4\nE = 55\n"  # typed below the hunk: the same edit applies
    editor.change(uri, typed)
    assert not editor.apply(first.edit).applied  # made for the text before the typing: a stale version
    newest = next(a for a in await code_actions_at(editor, uri, 0) if a.title.startswith("Apply agent edit"))
    assert newest.edit.document_changes[0].edits == first.edit.document_changes[0].edits
    assert editor.apply(newest.edit).applied
    assert editor.text(uri) == typed.replace("A = 1", "A = 10")
    await editor.wait_edits(run_id, 1)

    result = await editor.command("lspAgent.undoApply")
    assert result == {"runId": run_id, "undone": True, "files": ["calc.py"]}
    assert editor.text(uri) == typed
    editor.close(uri)


async def test_a_change_typed_by_hand_is_not_taken_for_an_offered_code_action(editor, model):
    """The agent's change typed by hand along with another edit settles as applied, but no offer left that text."""
    (editor.root / "hand.py").write_text("C = 1\nD = 2\nE = 3\nF = 4\nG = 5\n")
    uri = editor.open("hand.py")
    model.add_steps(
        [
            step("edit_file", path="hand.py", old_text="C = 1", new_text="C = 3"),
            step("task_complete", summary="c three"),
        ]
    )
    run_id = await editor.ask("c three")
    await editor.wait_event(run_id, "done")
    assert any(a.title.startswith("Apply agent edit") for a in await code_actions_at(editor, uri, 0))

    typed = "C = 3\nD = 2\nE = 3\nF = 4\nG = 6\n"  # the agent's line plus one of the user's own
    editor.change(uri, typed)
    await code_actions_at(editor, uri, 0)  # a request after the didChange: the server has seen the text
    await editor.wait_edits(run_id, 1)

    with pytest.raises(JsonRpcException, match="nothing to undo"):
        await editor.command("lspAgent.undoApply")
    assert editor.text(uri) == typed
    editor.close(uri)


async def test_undo_restores_a_closed_file_to_the_disk_text_the_apply_was_built_on(editor, model):
    (editor.root / "closed.py").write_text("K = 1\nL = 2\n")
    model.add_steps(
        [
            step("edit_file", path="closed.py", old_text="K = 1", new_text="K = 2"),
            step("task_complete", summary="k two"),
        ]
    )
    run_id = await editor.ask("k two")
    await editor.wait_event(run_id, "done")
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"], result
    assert (editor.root / "closed.py").read_text() == "K = 2\nL = 2\n"

    result = await editor.command("lspAgent.undoApply")
    assert result == {"runId": run_id, "undone": True, "files": ["closed.py"]}
    assert (editor.root / "closed.py").read_text() == "K = 1\nL = 2\n"
