"""Conversations, @mentions, #diagnostics and project rules through the real protocol against the scripted model."""

from __future__ import annotations

import pytest
import pytest_asyncio
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
RULES = "# Rules\n- Use tabs, never spaces.\n- Run `make check` before finishing.\n"
LONG_ANSWER = "The add function subtracts because of a typo in line 2. " * 20  # ~1,100 characters


def finish(summary: str) -> dict:
    return {"content": "done", "tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}]}


def edit(path: str, old: str, new: str) -> dict:
    call = {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}
    return {"content": f"editing {path}", "tool_calls": [call]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(
        tmp_path_factory.mktemp("ws") / "proj",
        {
            "calc.py": CALC,
            "notes.py": "X = 1\n",
            "pkg/shapes.py": "class Circle:\n    def area(self):\n        return 3.14\n",
            ".env": "OPENAI_API_KEY=sk-live-abcdefghijklmnop\n",
            "AGENTS.md": RULES,
        },
    )
    ed = await start_editor(
        root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": scripted_settings(model)}
    )
    await ed.wait_index_ready()
    yield ed
    await stop_editor(ed)


def task_message(model: ScriptedModelServer) -> str:
    """The first user message of the newest run's first request."""
    return next(m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user")


def mention_events(editor, run_id: str) -> list[dict]:
    return [e for e in editor.run_events(run_id, "context") if e.get("what") == "mentions"]


def system_message(model: ScriptedModelServer) -> str:
    return model.requests[-1]["messages"][0]["content"]


async def run(editor, model, task: str, steps: list[dict], **extra) -> str:
    model.add_steps(steps)
    run_id = await editor.ask(task, **extra)
    await editor.wait_event(run_id, "done")
    return run_id


# ----- conversations --------------------------------------------------------------------------------------------


async def test_follow_up_sees_the_full_answer_and_what_was_rejected_and_why(editor, model):
    first = await run(editor, model, "why does add subtract?", [finish(LONG_ANSWER)], sessionId="c1")
    second = await run(
        editor, model, "bump X", [edit("notes.py", "X = 1", "X = 2"), finish("X is 2")], sessionId="c1"
    )
    await editor.command("lspAgent.rejectEdits", {"runId": second, "reason": "X must stay odd"})
    await run(editor, model, "and now?", [finish("ok")], sessionId="c1", followUp=True)
    text = task_message(model)
    assert LONG_ANSWER.strip() in text  # in full: the old memory cut answers at 300 characters
    assert f"User (run {first}): why does add subtract?" in text
    assert f"Then: user rejected changes of run {second}" in text and "reason: X must stay odd" in text
    shown = await editor.command("lspAgent.conversation", {"sessionId": "c1"})
    assert [e["task"] for e in shown["exchanges"]] == ["why does add subtract?", "bump X", "and now?"]
    assert shown["exchanges"][0]["answer"] == LONG_ANSWER.strip() and shown["exchanges"][1]["proposed"] == [
        "notes.py"
    ]
    assert "X must stay odd" in shown["exchanges"][1]["notes"][0] and shown["promptTokens"] > 250


async def test_new_conversation_forgets_and_follow_up_needs_an_exchange(editor, model):
    await run(editor, model, "remember the word pineapple", [finish("noted")], sessionId="c2")
    assert (await editor.command("lspAgent.newConversation", {"sessionId": "c2"})) == {"sessionId": "c2"}
    with pytest.raises(Exception, match="nothing to follow up in conversation c2: ask first"):
        await editor.ask("what was the word?", sessionId="c2", followUp=True)
    await run(editor, model, "what was the word?", [finish("no idea")], sessionId="c2")
    assert "pineapple" not in task_message(model)
    fresh = await editor.command("lspAgent.newConversation")
    assert fresh["sessionId"] and fresh["sessionId"] != "c2"
    with pytest.raises(Exception, match="'followUp' must be true or false"):
        await editor.ask("x", sessionId="c2", followUp="yes")


async def test_follow_up_defaults_to_the_last_asks_file(editor, model):
    uri = editor.uri("calc.py")
    await run(editor, model, "look at this", [finish("seen")], sessionId="c3", uri=uri)
    await run(editor, model, "and again", [finish("seen again")], sessionId="c3", followUp=True)
    assert "The user is looking at the file calc.py" in task_message(model)


async def test_retry_rejects_the_pending_edits_and_runs_the_task_again(editor, model):
    first = await run(
        editor, model, "make X three", [edit("notes.py", "X = 1", "X = 3"), finish("X is 3")], sessionId="c4"
    )
    assert (await editor.command("lspAgent.status"))["pending"][-1]["runId"] == first
    model.add_steps([finish("left it")])
    retried = await editor.command("lspAgent.retry", {"sessionId": "c4"})
    assert retried["task"] == "make X three" and retried["retried"] == first
    await editor.wait_event(retried["runId"], "done")
    assert [e["runId"] for e in (await editor.command("lspAgent.status"))["pending"]].count(first) == 0
    (rejected,) = editor.edit_events(first)
    assert rejected["outcome"] == "rejected" and rejected["reason"] == "the user retried the ask"
    text = task_message(model)
    assert "The user discarded this attempt and asked again." in text and text.endswith("Task: make X three")
    shown = await editor.command("lspAgent.conversation", {"sessionId": "c4"})
    assert [e["retried"] for e in shown["exchanges"]] == [True, False]


async def test_retry_refuses_unknown_conversations_and_bad_arguments(editor):
    with pytest.raises(Exception, match="conversation nope has no ask to retry; ask first"):
        await editor.command("lspAgent.retry", {"sessionId": "nope"})
    with pytest.raises(Exception, match='"sessionId" must be a non-empty string'):
        await editor.command("lspAgent.retry", {"sessionId": 5})
    with pytest.raises(Exception, match="expects one argument"):
        await editor.command("lspAgent.conversation", "c1")
    empty = await editor.command("lspAgent.conversation", {"sessionId": "never-used"})
    assert empty["exchanges"] == []


# ----- mentions and diagnostics -----------------------------------------------------------------------------


async def test_file_symbol_and_line_range_mentions_are_attached(editor, model):
    run_id = await run(
        editor, model, "compare @calc.py with @Circle and @calc.py:5-6, see @pkg/", [finish("compared")]
    )
    text = task_message(model)
    assert "calc.py (mentioned):" in text and "    2      return a - b" in text
    assert "class Circle in pkg/shapes.py, lines 1-3 (mentioned)" in text and "return 3.14" in text
    assert "lines 5-6 of calc.py (mentioned)" in text
    assert "pkg/ (mentioned directory):\nshapes.py" in text
    (event,) = mention_events(editor, run_id)
    assert event["attached"] == [
        "@calc.py (6 lines)",
        "@Circle (pkg/shapes.py:1)",
        "@calc.py:5-6 (2 lines)",
        "@pkg/",
    ]
    assert event["problems"] == []


async def test_missing_secret_and_escaping_mentions_are_reported_and_the_ask_goes_on(editor, model):
    before = len(editor.client.messages)
    run_id = await run(
        editor,
        model,
        "fix @nowhere.py and @NoSuchThing using @.env, @../outside.py and @selection; mail me@example.com",
        [finish("done anyway")],
    )
    (event,) = mention_events(editor, run_id)
    problems = event["problems"]
    assert "@nowhere.py: no file named 'nowhere.py' in the workspace; the ask goes on without it" in problems
    assert (
        "@NoSuchThing: no file or symbol named 'NoSuchThing' in the workspace; the ask goes on without it"
        in problems
    )
    assert any(p.startswith("@.env: .env is a secret file") for p in problems)
    assert any(p.startswith("@../outside.py: ") and "outside the workspace root" in p for p in problems)
    assert "@selection: nothing is selected in the editor; select code and ask again" in problems
    assert len(problems) == 5  # the mail address is no mention
    assert (await editor.wait_event(run_id, "done"))["success"] is True
    assert "sk-live" not in str(model.requests[-1]) and "(mentioned)" not in task_message(model)
    warnings = [m.message for m in editor.client.messages[before:]]
    assert any("@nowhere.py: no file named" in w for w in warnings)


async def test_hash_diagnostics_attaches_every_servers_diagnostics(editor, model):
    uri = editor.uri("calc.py")
    diagnostics = [
        {"range": _range(1), "message": "unused   variable", "severity": 2, "source": "ruff", "code": "F841"},
        {"range": _range(4), "message": "mul is never called", "severity": 4, "source": "pyright"},
    ]
    run_id = await run(editor, model, "fix #diagnostics", [finish("fixed")], uri=uri, diagnostics=diagnostics)
    text = task_message(model)
    assert "Diagnostics of the current file (from pyright, ruff):" in text
    assert "calc.py:2: warning [ruff] (F841): unused variable" in text and "calc.py:5: hint [pyright]" in text
    assert mention_events(editor, run_id)[0]["attached"] == ["#diagnostics (2)"]
    await run(editor, model, "what about #diagnostics", [finish("none")], uri=uri)
    assert mention_events(editor, editor.events[-1]["runId"])[0]["problems"] == [
        "#diagnostics: the editor sent no diagnostics for calc.py (none reported, or no file open)"
    ]


async def test_fix_this_diagnostic_sends_its_neighbours_only(editor, model):
    uri = editor.uri("calc.py")
    diagnostics = [
        {"range": _range(1), "message": "target problem", "severity": 1, "source": "mypy"},
        {"range": _range(3), "message": "near neighbour", "severity": 2, "source": "ruff"},
        {"range": _range(90), "message": "far away", "severity": 2, "source": "ruff"},
    ]
    await run(
        editor,
        model,
        "Fix this problem",
        [finish("fixed")],
        uri=uri,
        range=_range(1),
        diagnostics=diagnostics,
    )
    text = task_message(model)
    assert "Diagnostics near the one to fix (from mypy, ruff):" in text
    assert "target problem" in text and "near neighbour" in text and "far away" not in text


async def test_code_action_to_fix_a_diagnostic_asks_for_the_files_diagnostics(editor):
    from lsprotocol import types

    uri = editor.open("calc.py")
    diagnostic = types.Diagnostic(
        range=types.Range(types.Position(1, 0), types.Position(1, 5)), message="bad"
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    fix = next(a for a in actions if a.title.startswith("Ask agent to fix: bad"))
    command = fix.command if isinstance(fix, types.CodeAction) else fix
    assert command.arguments[0]["withDiagnostics"] is True
    editor.close(uri)


async def test_bad_diagnostics_are_refused_with_the_shape_expected(editor):
    with pytest.raises(Exception, match=r"'diagnostics\[0\]' must be an LSP diagnostic"):
        await editor.ask("fix", diagnostics=[{"message": "no range"}])
    with pytest.raises(Exception, match="'diagnostics' must be a list"):
        await editor.ask("fix", diagnostics="E501")


async def test_mention_completion_offers_files_symbols_selection_and_diagnostics(editor):
    items = (await editor.command("lspAgent.completeMention", {"prefix": "@ca"}))["items"]
    assert {"label": "@calc.py", "kind": "file", "detail": ""} in items
    labels = [
        i["label"] for i in (await editor.command("lspAgent.completeMention", {"prefix": "@Cir"}))["items"]
    ]
    assert "@Circle" in labels
    labels = [
        i["label"] for i in (await editor.command("lspAgent.completeMention", {"prefix": "@pkg/"}))["items"]
    ]
    assert labels == ["@pkg/shapes.py"]
    labels = [
        i["label"] for i in (await editor.command("lspAgent.completeMention", {"prefix": "@"}))["items"]
    ]
    assert "@selection" in labels and "@.env" not in labels
    labels = [
        i["label"] for i in (await editor.command("lspAgent.completeMention", {"prefix": "@.e"}))["items"]
    ]
    assert labels == []  # secret files are not offered
    assert (await editor.command("lspAgent.completeMention", {"prefix": "#d"}))["items"][0][
        "label"
    ] == "#diagnostics"
    with pytest.raises(Exception, match='"prefix" must be a string'):
        await editor.command("lspAgent.completeMention", {"prefix": 3})


# ----- project rules ------------------------------------------------------------------------------------------


async def test_agents_md_joins_the_system_prompt_with_a_status_line(editor, model):
    run_id = await run(editor, model, "hello", [finish("hi")])
    assert "Project rules" in system_message(model) and "Use tabs, never spaces." in system_message(model)
    (event,) = [e for e in editor.run_events(run_id, "context") if e.get("what") == "rules"]
    assert event["status"] == "project rules: loaded AGENTS.md (71 B)"
    (folder,) = (await editor.command("lspAgent.status"))["rules"]
    assert folder["loaded"] == [{"path": "AGENTS.md", "bytes": 71}]


async def test_huge_binary_and_secret_rules_are_left_out_with_a_message(editor, model):
    rules_md = editor.root / ".lsp-agent" / "rules.md"
    rules_md.parent.mkdir(exist_ok=True)
    rules_md.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (editor.root / "AGENTS.md").write_text(
        "Never push to main.\n" * 5000 + "api key: sk-live-abcdefghijklmnop\n"
    )
    try:
        run_id = await run(editor, model, "hello again", [finish("hi")])
        (event,) = [e for e in editor.run_events(run_id, "context") if e.get("what") == "rules"]
        assert event["loaded"] == []
        assert event["problems"] == [
            "AGENTS.md not loaded: 100.0 KB is over the 32.0 KB limit for project rules; shorten it "
            "(keep the rules, link to longer documents the agent can read)",
            ".lsp-agent/rules.md not loaded: it is a binary file, not Markdown text",
        ]
        assert (
            "Project rules" not in system_message(model)
            and (await editor.wait_event(run_id, "done"))["success"]
        )
        (editor.root / "AGENTS.md").write_text("Deploy with key sk-live-abcdefghijklmnop only.\n")
        rules_md.write_text("Prefer pathlib.\n")
        await run(editor, model, "once more", [finish("hi")])
        assert "Prefer pathlib." in system_message(
            model
        ) and "sk-live-abcdefghijklmnop" not in system_message(model)
        assert "[REDACTED:OPENAI_API_KEY]" in system_message(model)
    finally:
        (editor.root / "AGENTS.md").write_text(RULES)
        rules_md.unlink()


def _range(line: int) -> dict:
    return {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 4}}
