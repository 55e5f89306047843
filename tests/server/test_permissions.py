"""Guarded tools ask through window/showMessageRequest with the four options; "always" answers persist per
workspace (per command prefix for run_command), can be listed and revoked; "Reject once" holds for the session."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.agent.consent.store import PermissionStore
from lsp_agent.testing.scripted_model import ScriptedModelServer

SCENARIO = [sys.executable, str(Path(__file__).with_name("guarded_tool_server.py"))]
FOUR = ["Allow once", "Allow always", "Reject once", "Reject always"]


def stamp(text: str) -> dict:
    return {"content": "", "tool_calls": [{"name": "stamp", "arguments": {"text": text}}]}


def command(*argv: str) -> dict:
    return {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"argv": list(argv)}}]}


def finish() -> dict:
    return {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "stamped"}}]}


class Scenario:
    """One editor against the stamp server; `run` asks with a given answer and returns the tool results."""

    def __init__(self, editor, model) -> None:
        self.editor, self.model = editor, model
        self.titles: list[list[str]] = []

    async def run(self, answer: str | None, steps: list[dict], session: str | None = None) -> list[dict]:
        self.editor.permission_answer = answer
        self.editor.permission_prompts.clear()
        self.model.add_steps([*steps, finish()])
        run_id = await self.editor.ask("do things", **({"sessionId": session} if session else {}))
        await self.editor.wait_event(run_id, "done", timeout=90)
        return [e for e in self.editor.run_events(run_id, "tool_result") if e["name"] != "task_complete"]

    @property
    def asked(self) -> int:
        return len(self.editor.permission_prompts)


@pytest.fixture
async def scenario(tmp_path):
    root = write_tree(tmp_path / "proj", {"a.py": "A = 1\n"})
    with ScriptedModelServer([]) as model:
        editor = await start_editor(
            root,
            tmp_path / "cache",
            init_options={"lspAgent": scripted_settings(model)},
            command=SCENARIO,
        )
        try:
            yield Scenario(editor, model)
        finally:
            await stop_editor(editor)


def store_of(scenario: Scenario) -> PermissionStore:
    """The server's store for the workspace (its XDG_CONFIG_HOME is the test's private home/.config)."""
    config = scenario.editor.root.parent / "cache" / "home" / ".config"
    return PermissionStore(scenario.editor.root, config / "lsp-agent" / "permissions")


@pytest.mark.asyncio
async def test_four_answers_once_and_for_the_session(scenario):
    (once,) = await scenario.run("Allow once", [stamp("one")])
    assert once["ok"] and "stamped one" in once["output"] and scenario.editor.permission_titles == [FOUR]
    (again,) = await scenario.run("Allow once", [stamp("two")])
    assert "stamped two" in again["output"] and scenario.asked == 1, "allow once is asked again next time"

    first, second = await scenario.run("Reject once", [stamp("three"), stamp("four")], "s1")
    assert scenario.asked == 1, "a denial is remembered for the session instead of asking on every call"
    assert (
        "Permission denied" in first["output"] and "already declined it in this session" in second["output"]
    )
    (later,) = await scenario.run("Allow once", [stamp("five")], "s1")  # a follow-up ask of the same session
    assert scenario.asked == 0 and "stamped five" not in later["output"]
    (other,) = await scenario.run("Allow once", [stamp("six")], "s2")  # another session is asked
    assert scenario.asked == 1 and "stamped six" in other["output"]

    (dismissed,) = await scenario.run(None, [stamp("seven")], "s3")
    assert "Permission denied" in dismissed["output"]
    (after,) = await scenario.run("Allow once", [stamp("eight")], "s3")
    assert scenario.asked == 1 and "stamped eight" in after["output"], "dismissing is not a remembered answer"
    assert store_of(scenario).rules() == [], "no 'always' answer, nothing persisted"


@pytest.mark.asyncio
async def test_always_answers_persist_per_workspace_and_can_be_listed_and_revoked(scenario):
    editor = scenario.editor
    (stamped,) = await scenario.run("Allow always", [stamp("one")])
    assert "stamped one" in stamped["output"] and scenario.asked == 1
    (again,) = await scenario.run("Reject once", [stamp("two")], "fresh-session")
    assert scenario.asked == 0 and "stamped two" in again["output"], "remembered across sessions"

    ran = await scenario.run(
        "Allow always", [command("echo", "-n", "tests/x"), command("echo", "-n", "tests/y")]
    )
    assert scenario.asked == 1 and [r["ok"] for r in ran] == [True, True]
    assert "tests/y" in ran[1]["output"], "the prefix `echo -n` covers the second command"
    (other,) = await scenario.run("Reject always", [command("printf", "a/x")])
    assert scenario.asked == 1 and "Permission denied" in other["output"]
    (still,) = await scenario.run("Allow once", [command("printf", "b/y")])
    assert scenario.asked == 0 and "saved permissions reject it (run_command: printf)" in still["output"]

    listed = await editor.command("lspAgent.permissions", {"action": "list"})
    (workspace,) = listed["workspaces"]
    assert workspace["workspace"] == str(editor.root.resolve())
    assert [(r["key"], r["decision"]) for r in workspace["rules"]] == [
        ("stamp", "allow"),
        ("run_command: echo -n", "allow"),
        ("run_command: printf", "deny"),
    ]
    stored = json.loads(Path(workspace["file"]).read_text())
    assert stored["version"] == 1 and stored["rules"][1]["prefix"] == ["echo", "-n"]

    revoked = await editor.command("lspAgent.permissions", {"action": "revoke", "key": "stamp"})
    assert [r["key"] for r in revoked["revoked"]] == ["stamp"]
    (asked,) = await scenario.run("Allow once", [stamp("three")], "another")
    assert scenario.asked == 1 and "stamped three" in asked["output"], "revoked: asked again"
    with pytest.raises(Exception, match="no remembered permission 'nope'"):
        await editor.command("lspAgent.permissions", {"action": "revoke", "key": "nope"})
    with pytest.raises(Exception, match='"action": "list"'):
        await editor.command("lspAgent.permissions", {"action": "delete"})

    # The settings' rules still come first.
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": {"permissions": {"allow": ["run_command"]}}})
    )
    (allowed,) = await scenario.run(None, [command("printf", "z")])
    assert scenario.asked == 0 and allowed["ok"] and "z" in allowed["output"]
