"""lspAgent.exchanges and lspAgent.rewind through the real protocol: the files the later exchanges applied are
restored byte for byte (open buffer and disk), a file changed since is refused and left alone, created files go,
and the next ask's prompt no longer holds the dropped exchanges."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException
from scripted_editor import editor_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

APP = "def greet(name):\n    return 'hi ' + name  # café\n\n\nVALUE = 1"  # no final newline
UTIL = "X = 1\n"
model, editor = editor_fixtures({"app.py": APP, "util.py": UTIL})


def step(name: str, **arguments: str) -> dict:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


async def run_and_apply(editor, model, task: str, steps: list[dict]) -> str:
    model.add_steps([*steps, step("task_complete", summary=task)])
    run_id = await editor.ask(task)
    await editor.wait_event(run_id, "done")
    result = await editor.command("lspAgent.applyEdits", {"runId": run_id})
    assert result["applied"], result
    return run_id


async def test_rewind_restores_byte_for_byte_refuses_a_drifted_file_and_drops_the_exchanges(editor, model):
    await editor.command("lspAgent.newConversation")
    uri = editor.open("app.py")
    first = await run_and_apply(
        editor,
        model,
        "FIRST: bump value",
        [step("edit_file", path="app.py", old_text="VALUE = 1", new_text="VALUE = 2")],
    )
    after_first = editor.text(uri)
    second = await run_and_apply(
        editor,
        model,
        "SECOND: greet louder",
        [
            step("edit_file", path="app.py", old_text="'hi '", new_text="'HI '"),
            step("edit_file", path="util.py", old_text="X = 1", new_text="X = 2"),
            step("write_file", path="pkg/deep/new.py", content="Z = 3\n"),
        ],
    )
    assert (editor.root / "pkg" / "deep" / "new.py").exists()

    listing = await editor.command("lspAgent.exchanges")
    rows = [(r["number"], r["runId"], r["applied"], r["rewound"]) for r in listing["exchanges"]]
    assert rows == [
        (1, first, ["app.py"], False),
        (2, second, ["app.py", "pkg/deep/new.py", "util.py"], False),
    ]

    (editor.root / "util.py").write_text(
        "X = 2\nY = 5\n"
    )  # the user changed it since the apply (closed file)
    result = await editor.command("lspAgent.rewind", {"exchange": 1})
    assert result["exchange"] == 1 and result["dropped"] == [second]
    assert sorted(result["restored"]) == ["app.py", "pkg/deep/new.py"]
    assert result["refused"] == ["util.py: changed since the apply"]
    assert editor.text(uri) == after_first  # the open buffer, exactly
    assert not (editor.root / "pkg").exists()  # the created file and the folders the apply made are gone
    assert (editor.root / "util.py").read_text() == "X = 2\nY = 5\n"  # left as the user made it
    assert any("changed since the apply" in m.message for m in editor.client.messages)

    again = await editor.command("lspAgent.exchanges")
    assert [r["rewound"] for r in again["exchanges"]] == [False, True]
    with pytest.raises(JsonRpcException, match="exchange 2 was rewound already"):
        await editor.command("lspAgent.rewind", {"exchange": 2})

    model.add_steps([step("task_complete", summary="ok")])
    third = await editor.ask("THIRD: what now?")
    await editor.wait_event(third, "done")
    prompt = str(model.requests[-1]["messages"])
    assert "FIRST: bump value" in prompt and "SECOND: greet louder" not in prompt

    back = await editor.command("lspAgent.rewind", {"exchange": 0})  # to the start: the first apply goes too
    assert back["restored"] == ["app.py"]
    assert back["refused"] == ["util.py: changed since the apply"]  # still waiting, still changed
    assert editor.text(uri) == APP
    editor.close(uri)


async def test_rewind_refuses_bad_arguments_with_a_message(editor):
    await editor.command("lspAgent.newConversation")
    with pytest.raises(JsonRpcException, match="nothing to rewind"):
        await editor.command("lspAgent.rewind")
    with pytest.raises(JsonRpcException, match='"exchange" must be a whole number'):
        await editor.command("lspAgent.rewind", {"exchange": "two"})
    with pytest.raises(JsonRpcException, match="no exchange 3"):
        await editor.command("lspAgent.rewind", {"exchange": 3})
