"""What was really applied or rejected, through the real protocol with a plain pygls client (no structure hooks):
code actions keep their edit, forged "applied" claims change nothing, per-hunk and per-file rejections (with
reasons) reach the next exchange, and nothing is written to the workspace without acceptance."""

from __future__ import annotations

import pytest
from lsprotocol import types
from scripted_editor import code_actions_at, edit_step, editor_fixtures, finish_step
from server_editor import plain_capabilities, scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(12))
FILES = {"long.py": LONG, "other.py": "Y = 1\n", "third.py": "Z = 1\n"}

model, editor = editor_fixtures(FILES, untouched=True)


async def three_changes(editor, model, task: str) -> str:
    """A run that changes f1 and f10 in long.py and Y in other.py; returns its id once it is done."""
    model.add_steps(
        [
            edit_step("long.py", "return x + 1\n", "return x + 1  # one\n"),
            edit_step("long.py", "return x + 10\n", "return x + 10  # ten\n"),
            edit_step("other.py", "Y = 1", "Y = 2"),
            finish_step(task),
        ]
    )
    run_id = await editor.ask(task)
    await editor.wait_event(run_id, "done")
    return run_id


async def pending_of(editor, run_id: str) -> dict | None:
    status = await editor.command("lspAgent.status")
    return next((p for p in status["pending"] if p["runId"] == run_id), None)


async def test_a_pygls_client_reads_every_action_with_its_edit_or_command(editor, model):
    uri = editor.open("long.py")
    run_id = await three_changes(editor, model, "annotate f1 and f10, bump Y")
    actions = await code_actions_at(editor, uri, 4)
    by_title = {a.title: a for a in actions}
    apply = next(a for t, a in by_title.items() if t.startswith("Apply agent edit"))
    assert isinstance(apply, types.CodeAction) and apply.command is None
    assert apply.kind == types.CodeActionKind.QuickFix and apply.edit.document_changes[0].edits
    reject_hunk = by_title["Reject this agent change (line 5)"]
    reject_file = by_title["Reject all agent changes in long.py"]
    reject_all = next(a for t, a in by_title.items() if t.startswith("Reject agent edit:"))
    for command in (reject_hunk, reject_file, reject_all):  # whole Commands: a string name and its arguments
        assert isinstance(command, types.Command) and command.command == "lspAgent.rejectEdits"
        assert command.arguments[0]["runId"] == run_id
    assert reject_file.arguments[0]["files"] == [uri]
    hint = next(d for d in editor.client.diagnostics[uri] if d.range.start.line == 4)
    assert hint.data["hunkId"] == reject_hunk.arguments[0]["hunks"][0]["id"], (
        "hints name the hunk the same way"
    )
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
    editor.close(uri)


async def test_forged_or_stale_applied_claims_leave_the_hunks_pending(editor, model):
    uri = editor.open("long.py")
    run_id = await three_changes(editor, model, "annotate again")
    # The old two-step shape: the command without the edit. The document does not hold the change: nothing moves.
    claim = await editor.command("lspAgent.editsApplied", {"runId": run_id, "uri": uri, "hunk": 0})
    assert claim["verified"] == 0 and claim["state"] == "pending"
    assert len((await pending_of(editor, run_id))["files"]) == 2 and editor.edit_events(run_id) == []
    # A document that holds something else on that line is not the hunk either.
    editor.change(uri, LONG.replace("return x + 1\n", "return x + 1  # uno\n"))
    claim = await editor.command("lspAgent.editsApplied", {"runId": run_id})
    assert claim["verified"] == 0 and editor.edit_events(run_id) == []
    # Once the buffer really holds the agent's line, the server settles it (from the text, claim or not).
    editor.change(uri, LONG.replace("return x + 1\n", "return x + 1  # one\n"))
    (settled,) = await editor.wait_edits(run_id, 1)
    assert settled["changes"] == [{"path": "long.py", "what": "line 5"}] and settled["state"] == "pending"
    assert settled["remaining"] == ["long.py", "other.py"]
    claim = await editor.command("lspAgent.editsApplied", {"runId": run_id})
    assert claim["verified"] == 0, "nothing more is in the text"
    editor.change(uri, LONG)  # the user undoes it: the change is not pending again, but f10's still is
    titles = [a.title for a in await code_actions_at(editor, uri, 31)]
    assert any(t.startswith("Apply agent edit") for t in titles)
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
    editor.close(uri)


async def test_an_applied_code_action_is_settled_noted_and_seen_by_the_next_ask(editor, model):
    uri = editor.open("long.py")
    run_id = await three_changes(editor, model, "annotate once more")
    session = next(r for r in (await editor.command("lspAgent.status"))["runs"] if r["runId"] == run_id)
    apply_all = next(
        a for a in await code_actions_at(editor, uri, 4) if a.title.startswith("Apply all agent edits")
    )
    assert editor.apply(apply_all.edit).applied  # long.py is open (didChange), other.py is written to disk
    (settled,) = await editor.wait_edits(run_id, 1)
    assert {c["path"] for c in settled["changes"]} == {"long.py"}
    assert await pending_of(editor, run_id) is None, "status reads other.py from disk and settles it too"
    events = editor.edit_events(run_id)
    assert events[-1]["state"] == "applied" and events[-1]["remaining"] == []
    model.add_steps([finish_step("ok")])
    follow = await editor.ask("next", sessionId=session["sessionId"])
    await editor.wait_event(follow, "done")
    prompt = str(model.requests[-1]["messages"])
    assert f"user applied changes of run {run_id}" in prompt and "long.py line 5, line 32" in prompt
    assert "other.py line 1" in prompt
    editor.close(uri)
    (editor.root / "other.py").write_text(FILES["other.py"])  # the test's own editor wrote it; restore


async def test_reject_one_hunk_then_a_file_with_reasons_the_next_ask_sees(editor, model):
    uri = editor.open("long.py")
    run_id = await three_changes(editor, model, "annotate and bump")
    session = next(r for r in (await editor.command("lspAgent.status"))["runs"] if r["runId"] == run_id)
    hunk = next(
        a for a in await code_actions_at(editor, uri, 31) if a.title.startswith("Reject this agent change")
    )
    arg = {**hunk.arguments[0], "reason": "ten needs no comment"}
    result = await editor.command(hunk.command, arg)
    assert result["changes"] == [{"path": "long.py", "what": "line 32"}] and result["state"] == "pending"
    assert result["remaining"] == ["long.py", "other.py"]
    titles = [a.title for a in await code_actions_at(editor, uri, 31)]
    assert not any(t.startswith(("Apply agent edit", "Reject this")) for t in titles), "f10's hunk is gone"
    still = [a for a in await code_actions_at(editor, uri, 4) if a.title.startswith("Apply agent edit")]
    assert [e.new_text for e in still[0].edit.document_changes[0].edits] == ["    return x + 1  # one\n"]
    with pytest.raises(Exception, match="not pending in run"):  # a stale action: that hunk is gone
        await editor.command(hunk.command, hunk.arguments[0])

    by_file = await editor.command(
        "lspAgent.rejectEdits", {"runId": run_id, "files": ["other.py"], "reason": "Y stays 1"}
    )
    assert by_file["changes"] == [{"path": "other.py", "what": "line 1"}] and by_file["remaining"] == [
        "long.py"
    ]
    events = editor.edit_events(run_id)
    assert [e["outcome"] for e in events] == ["rejected", "rejected"] and events[0][
        "reason"
    ] == "ten needs no comment"
    model.add_steps([finish_step("understood")])
    follow = await editor.ask("what now?", sessionId=session["sessionId"])
    await editor.wait_event(follow, "done")
    prompt = str(model.requests[-1]["messages"])
    assert "user rejected changes of run" in prompt and "ten needs no comment" in prompt
    assert "the agent wanted: 'return x + 10 # ten'" in prompt, "the note says what was rejected"
    assert "Y stays 1" in prompt and "still pending: long.py" in prompt
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
    editor.close(uri)


async def test_bad_reject_arguments_get_clear_errors(editor, model):
    run_id = await three_changes(editor, model, "one more")
    with pytest.raises(Exception, match="not pending in run"):
        await editor.command("lspAgent.rejectEdits", {"runId": run_id, "files": ["nope.py"]})
    with pytest.raises(Exception, match='"hunks" must be a list'):
        await editor.command("lspAgent.rejectEdits", {"runId": run_id, "hunks": "all"})
    assert len((await pending_of(editor, run_id))["files"]) == 2, "a bad request rejects nothing"
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})


@pytest.mark.asyncio(loop_scope="function")
async def test_neovim_like_client_gets_plain_changes_and_is_settled_from_its_didchange(tmp_path):
    root = write_tree(tmp_path / "proj", {"long.py": LONG})
    with ScriptedModelServer([]) as model:
        ed = await start_editor(
            root,
            tmp_path / "cache",
            init_options={"lspAgent": scripted_settings(model)},
            capabilities=plain_capabilities(),
        )
        try:
            uri = ed.open("long.py")
            model.add_steps(
                [edit_step("long.py", "return x + 3\n", "return x + 3  # three\n"), finish_step("f3")]
            )
            run_id = await ed.ask("annotate f3")
            await ed.wait_event(run_id, "done")
            (apply,) = [
                a for a in await code_actions_at(ed, uri, 10) if a.title.startswith("Apply agent edit")
            ]
            assert apply.edit.changes and not apply.edit.document_changes
            assert ed.apply(apply.edit).applied
            (settled,) = await ed.wait_edits(run_id, 1)
            assert settled["state"] == "applied"
            assert (root / "long.py").read_text() == LONG, (
                "the edit is in the buffer; saving is the user's call"
            )
        finally:
            await stop_editor(ed)
