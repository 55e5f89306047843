"""Agent runs through the real protocol against the scripted model: events, progress, pending proposals, code
actions, workspace/applyEdit, reject + follow-up in a session, cancel mid-request, stale documents, two runs."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types
from scripted_editor import code_actions_at, edit_step, editor_fixtures, finish_step, tool_step

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(12))
FILES = {"calc.py": CALC, "long.py": LONG, "alpha.py": "A = 1\n", "beta.py": "B = 1\n", "notes.py": "X = 1\n"}

model, editor = editor_fixtures(FILES)


async def wait_model_request(model: ScriptedModelServer, seen: int, timeout: float = 30) -> None:
    """Wait until the model server received a request beyond the first `seen`."""
    deadline = time.monotonic() + timeout
    while len(model.requests) <= seen:
        assert time.monotonic() < deadline, "the model never received the request"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)


async def test_ask_events_pending_proposal_code_action_and_apply(editor, model):
    uri = editor.open("calc.py", "# TODO: check add\n" + CALC)  # unsaved buffer text the agent must see
    model.add_steps(
        [
            edit_step(
                "calc.py",
                "# TODO: check add\ndef add(a, b):\n    return a - b",
                "def add(a, b):\n    return a + b",
            ),
            finish_step("Fixed add to return the sum"),
        ]
    )
    selection = {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}}
    asked = await editor.command(
        "lspAgent.ask", {"task": "fix the add function", "uri": uri, "range": selection}
    )
    run_id = asked["runId"]
    done = await editor.wait_event(run_id, "done")
    kinds = [e["kind"] for e in editor.run_events(run_id)]
    assert (
        kinds[0] == "start" and {"tool_call", "tool_result", "proposal"} <= set(kinds) and kinds[-1] == "done"
    )
    assert done["pending"] is True and done["stopReason"] == "complete"
    first_request = model.requests[-2]
    assert "return a - b" in str(first_request["messages"]) and "calc.py" in str(first_request["messages"])
    assert {"read_file", "run_python"} <= {
        t["function"]["name"] for t in first_request["tools"]
    }  # plugins loaded
    assert any(
        f"[run {run_id}]" in m.message and "edit_file" in m.message for m in editor.client.log_messages
    )
    progress = editor.client.progress_reports[f"lsp-agent/run/{run_id}"]
    assert isinstance(progress[0], types.WorkDoneProgressBegin) and progress[0].cancellable
    assert any(isinstance(p, types.WorkDoneProgressReport) for p in progress)
    assert isinstance(progress[-1], types.WorkDoneProgressEnd)

    hints = editor.client.diagnostics[uri]  # the minimal diff: drop line 0, change line 2
    assert [(d.source, d.severity, d.range.start.line) for d in hints] == [
        ("lsp-agent", types.DiagnosticSeverity.Hint, 0),
        ("lsp-agent", types.DiagnosticSeverity.Hint, 2),
    ]

    actions = await code_actions_at(editor, uri, 2)
    titles = [a.title for a in actions]
    assert "Apply agent edit: Fixed add to return the sum" in titles
    assert any(t.startswith("Reject agent edit") for t in titles)
    apply = next(a for a in actions if a.title.startswith("Apply agent edit"))
    (doc_edit,) = apply.edit.document_changes
    assert doc_edit.text_document.version == 1
    (text_edit,) = doc_edit.edits
    assert (text_edit.range.start.line, text_edit.range.end.line) == (2, 3)  # only the changed line
    assert text_edit.new_text == "    return a + b\n"
    assert any(a.title.startswith("Apply all agent edits (1 file)") for a in actions)
    assert (
        text_edit.annotation_id and apply.edit.change_annotations[text_edit.annotation_id].needs_confirmation
    )

    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"] is True and result["files"] == ["calc.py"] and result["refused"] == []
    assert editor.text(uri) == CALC.replace("a - b", "a + b")
    status = await editor.command("lspAgent.status")
    assert status["pending"] == []
    await asyncio.sleep(0.1)
    assert list(editor.client.diagnostics[uri]) == []
    model.add_steps([finish_step("Nothing more to do")])
    follow_up = await editor.ask("anything else?", sessionId=asked["sessionId"])
    await editor.wait_event(follow_up, "done")
    assert f"user applied changes of run {run_id}" in str(model.requests[-1]["messages"])
    editor.close(uri)


async def test_code_action_applies_one_hunk_and_records_it(editor, model):
    uri = editor.open("long.py")
    model.add_steps(
        [
            edit_step("long.py", "return x + 0\n", "return x  # zero\n"),
            edit_step("long.py", "return x + 11\n", "return x + 11  # last\n"),
            finish_step("Annotate f0 and f11"),
        ]
    )
    run_id = await editor.ask("annotate the first and last functions")
    await editor.wait_event(run_id, "done")
    actions = await code_actions_at(editor, uri, 34)  # f11's body
    apply = next(a for a in actions if a.title.startswith("Apply agent edit"))
    assert any(a.title.startswith("Apply all agent edits (1 file)") for a in actions)
    (doc_edit,) = apply.edit.document_changes
    assert [e.range.start.line for e in doc_edit.edits] == [34]
    assert apply.command is None  # the edit alone: the server learns from the text that follows
    assert editor.apply(apply.edit).applied
    (settled,) = await editor.wait_edits(run_id, 1)
    assert settled["outcome"] == "applied" and settled["state"] == "pending"
    assert settled["changes"] == [{"path": "long.py", "what": "line 35"}]
    assert editor.text(uri) == LONG.replace("return x + 11\n", "return x + 11  # last\n")
    status = await editor.command("lspAgent.status")
    (pending,) = status["pending"]
    assert pending["runId"] == run_id  # the other hunk is still waiting
    remaining = await code_actions_at(editor, uri, 1)
    assert [
        e.range.start.line
        for e in next(a for a in remaining if a.title.startswith("Apply agent"))
        .edit.document_changes[0]
        .edits
    ] == [1]
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
    editor.close(uri)


async def test_reject_with_reason_then_follow_up_sees_it(editor, model):
    model.add_steps([edit_step("notes.py", "X = 1", "X = 2"), finish_step("Set X to 2")])
    first = await editor.command("lspAgent.ask", {"task": "bump X"})
    await editor.wait_event(first["runId"], "done")
    assert (
        await editor.command("lspAgent.rejectEdits", {"runId": first["runId"], "reason": "X must stay odd"})
    )["rejected"]
    with pytest.raises(Exception, match="no pending edits"):
        await editor.command("lspAgent.applyEdits", {"runId": first["runId"]})
    model.add_steps([finish_step("Left X alone")])
    second = await editor.ask("try again", sessionId=first["sessionId"])
    await editor.wait_event(second, "done")
    follow_up = str(model.requests[-1]["messages"])
    assert "rejected" in follow_up and "X must stay odd" in follow_up
    assert (editor.root / "notes.py").read_text() == "X = 1\n"


async def test_cancel_stops_a_run_mid_request_within_a_second(editor, model):
    model.add_steps([{"content": "thinking slowly", "delay": 30}])
    asked = len(model.requests)
    run_id = await editor.ask("a slow task")
    await wait_model_request(model, asked)  # the model request is in flight
    started = time.perf_counter()
    assert (await editor.command("lspAgent.cancel", {"runId": run_id}))["cancelled"] is True
    done = await editor.wait_event(run_id, "done", timeout=5)
    assert time.perf_counter() - started < 1.0
    assert done["stopReason"] == "cancelled"
    status = await editor.command("lspAgent.status")
    assert next(r for r in status["runs"] if r["runId"] == run_id)["state"] == "cancelled"
    assert isinstance(
        editor.client.progress_reports[f"lsp-agent/run/{run_id}"][-1], types.WorkDoneProgressEnd
    )


async def test_progress_cancel_from_the_client_cancels_the_run(editor, model):
    model.add_steps([{"content": "thinking slowly", "delay": 30}])
    asked = len(model.requests)
    run_id = await editor.ask("another slow task")
    await wait_model_request(model, asked)
    editor.client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token=f"lsp-agent/run/{run_id}")
    )
    done = await editor.wait_event(run_id, "done", timeout=5)
    assert done["stopReason"] == "cancelled"


async def test_two_runs_at_once_each_with_progress_and_proposal(editor, model):
    model.add_steps(
        [
            edit_step("alpha.py", "A = 1", "A = 2", match="alpha-task"),
            edit_step("beta.py", "B = 1", "B = 3", match="beta-task"),
            finish_step("alpha bumped", match="Edited alpha.py"),
            finish_step("beta bumped", match="Edited beta.py"),
        ]
    )
    run_a = await editor.ask("alpha-task: bump A")
    run_b = await editor.ask("beta-task: bump B")
    await asyncio.gather(editor.wait_event(run_a, "done"), editor.wait_event(run_b, "done"))
    status = await editor.command("lspAgent.status")
    pending = {p["runId"]: [f["path"] for f in p["files"]] for p in status["pending"]}
    assert pending == {run_a: ["alpha.py"], run_b: ["beta.py"]}
    for run_id in (run_a, run_b):
        assert isinstance(
            editor.client.progress_reports[f"lsp-agent/run/{run_id}"][-1], types.WorkDoneProgressEnd
        )
    result = await editor.command("lspAgent.applyEdits", {"runId": run_b, "files": [editor.uri("beta.py")]})
    assert result["applied"] and (editor.root / "beta.py").read_text() == "B = 3\n"
    assert (editor.root / "alpha.py").read_text() == "A = 1\n"
    await editor.command("lspAgent.rejectEdits", {"runId": run_a})


async def test_stale_document_rebases_clean_hunks_and_refuses_conflicts(editor, model):
    uri = editor.open("long.py")
    model.add_steps(
        [
            edit_step("long.py", "return x + 2\n", "return x + 2  # two\n"),
            edit_step("long.py", "return x + 9\n", "return x + 9  # nine\n"),
            finish_step("Annotate f2 and f9"),
        ]
    )
    run_id = await editor.ask("annotate f2 and f9")
    await editor.wait_event(run_id, "done")
    # The user edits after the agent read the file: a new first line (shifts everything) and f9's body.
    user_text = "import os\n" + LONG.replace("return x + 9\n", "return x + 99\n")
    editor.change(uri, user_text)
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"] is True
    (refusal,) = result["refused"]
    assert "long.py" in refusal and "line 29" in refusal and "edited after the agent read them" in refusal
    assert editor.text(uri) == user_text.replace("return x + 2\n", "return x + 2  # two\n")
    assert any("refused" in m.message for m in editor.client.messages if m.type == types.MessageType.Error)
    assert result["state"] == "pending"  # the refused change waits for the user: applied later, or rejected
    rejected = await editor.command(
        "lspAgent.rejectEdits", {"runId": run_id, "reason": "I changed f9 myself"}
    )
    assert rejected["changes"] == [{"path": "long.py", "what": "line 29"}] and rejected["state"] == "applied"
    editor.close(uri)


async def test_code_actions_and_hints_follow_the_users_typing(editor, model):
    uri = editor.open("long.py")
    model.add_steps(
        [
            edit_step("long.py", "return x + 2\n", "return x + 2  # two\n"),
            edit_step("long.py", "return x + 9\n", "return x + 9  # nine\n"),
            finish_step("Annotate f2 and f9 again"),
        ]
    )
    run_id = await editor.ask("annotate f2 and f9 again")
    await editor.wait_event(run_id, "done")

    def apply_actions(actions: list[types.CodeAction]) -> list[types.CodeAction]:
        return [a for a in actions if a.title.startswith("Apply agent edit") and a.edit is not None]

    editor.change(uri, "import os\n" + LONG)  # f2's body moves to line 8, f9's to line 29
    editor.change(uri, "import os\n" + LONG.replace("return x + 9\n", "return x + 99\n"))  # f9 edited
    (f2,) = apply_actions(await code_actions_at(editor, uri, 8))
    (doc_edit,) = f2.edit.document_changes
    assert doc_edit.text_document.version == editor.docs[uri][1]
    assert [(e.range.start.line, e.new_text) for e in doc_edit.edits] == [(8, "    return x + 2  # two\n")]
    assert (
        apply_actions(await code_actions_at(editor, uri, 29)) == []
    )  # f9's hunk is refused: nothing to apply
    await asyncio.sleep(0.5)  # hints are republished after a short quiet period
    assert [d.range.start.line for d in editor.client.diagnostics[uri]] == [8]

    editor.change(uri, "import os\n" + LONG)  # the user undoes the f9 edit: its hunk applies again
    (f9,) = apply_actions(await code_actions_at(editor, uri, 29))
    assert [e.range.start.line for e in f9.edit.document_changes[0].edits] == [29]

    editor.change(uri, "import os\n" + LONG.replace("return x + 9\n", "return x + 99\n"))
    actions = await code_actions_at(editor, uri, 8)
    apply_all = next(a for a in actions if a.title.startswith("Apply all agent edits"))
    assert "1 change refused" in apply_all.title
    assert editor.apply(apply_all.edit).applied
    (settled,) = await editor.wait_edits(run_id, 1)
    assert settled["changes"] == [{"path": "long.py", "what": "line 8"}] and settled["remaining"] == [
        "long.py"
    ]
    assert editor.text(uri) == "import os\n" + LONG.replace("return x + 9\n", "return x + 99\n").replace(
        "return x + 2\n", "return x + 2  # two\n"
    )
    (pending,) = [p for p in (await editor.command("lspAgent.status"))["pending"] if p["runId"] == run_id]
    assert (
        pending["state"] == "pending"
    )  # f9's refused change is neither applied nor lost: still the user's call
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
    editor.close(uri)


async def test_created_and_deleted_files_become_file_operations(editor, model):
    (editor.root / "obsolete.py").write_text("OLD = True\n")
    model.add_steps(
        [
            tool_step("write_file", thought="new module", path="pkg/new_mod.py", content="NEW = 1\n"),
            tool_step("delete_file", thought="cleanup", path="obsolete.py"),
            finish_step("Add pkg/new_mod.py, drop obsolete.py"),
        ]
    )
    run_id = await editor.ask("restructure")
    await editor.wait_event(run_id, "done")
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"] is True and sorted(result["files"]) == ["obsolete.py", "pkg/new_mod.py"]
    kinds = [type(c).__name__ for c in editor.applied[-1].document_changes]
    assert kinds == ["DeleteFile", "CreateFile", "TextDocumentEdit"] or kinds == [
        "CreateFile",
        "TextDocumentEdit",
        "DeleteFile",
    ]
    assert (editor.root / "pkg" / "new_mod.py").read_text() == "NEW = 1\n"
    assert not (editor.root / "obsolete.py").exists()


async def test_a_model_failure_ends_the_run_and_the_server_stays_up(editor, model):
    editor.client.messages.clear()
    model.add_steps([{"status": 400, "error": "model rejected the request: bad things"}])
    run_id = await editor.ask("this will fail")
    done = await editor.wait_event(run_id, "done")
    assert done["stopReason"] == "error" and done["pending"] is False
    assert editor.run_events(run_id, "error")
    assert any(run_id in m.message for m in editor.client.messages if m.type == types.MessageType.Error)
    model.add_steps([finish_step("still here")])
    again = await editor.ask("are you still there?")
    assert (await editor.wait_event(again, "done"))["stopReason"] == "complete"


async def test_a_cancelled_run_keeps_its_edits_pending_and_says_so_once(editor, model):
    model.add_steps(
        [
            tool_step(
                "write_file",
                thought="start a module",
                match="cancel-me",
                path="half_done.py",
                content="STARTED = True\n",
            ),
            {"content": "thinking slowly", "delay": 30, "match": "half_done.py"},
        ]
    )
    asked = len(model.requests)
    run_id = await editor.ask("cancel-me: write half_done.py, then think")
    await wait_model_request(model, asked + 1)  # the second request (after the edit) is in flight
    assert (await editor.command("lspAgent.cancel", {"runId": run_id}))["cancelled"] is True
    done = await editor.wait_event(run_id, "done", timeout=5)
    await asyncio.sleep(0.5)  # a second `done` would arrive now
    kinds = [e["kind"] for e in editor.run_events(run_id)]
    assert kinds.count("done") == 1 and kinds.index("proposal") < kinds.index("done")
    # the agent's own `done`, forwarded as it is: the proposal was pending before the editor heard it
    assert done["stopReason"] == "cancelled" and done["pending"] is True and "messages" in done
    status = await editor.command("lspAgent.status")
    assert next(r for r in status["runs"] if r["runId"] == run_id)["state"] == "cancelled"
    (pending,) = [p for p in status["pending"] if p["runId"] == run_id]
    assert [f["path"] for f in pending["files"]] == ["half_done.py"]
    assert not (editor.root / "half_done.py").exists()
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})
