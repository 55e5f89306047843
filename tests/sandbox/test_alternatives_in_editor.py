"""The other versions of a line that pass the tests, offered in the editor (pytest-lsp, a real small-profile run
with the scripted model, coverage and the sandbox): a code action on the proposal's line puts another passing version
in the proposal, whose hunks, hints and summary follow; applying then writes that version."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import test_sandbox_fault_lines
from test_sandbox_fault_lines import BUGGY_LINE, STATS, TASK

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from scripted_editor import code_actions_at  # noqa: E402
from server_editor import scripted_settings, start_editor, stop_editor  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins")]
stats_project = test_sandbox_fault_lines.stats_project  # clamp() returns lo where it should return hi
SMALL = {
    "toolCalling": "prompt",
    "profile": "small",
    "maxIterations": 6,
    "permissions": {"allow": ["run_tests"]},
}
CHOSEN, OTHER = "        return hi", "        return min(x, hi)"


def titles(actions: list) -> list[str]:
    """The titles of code actions and commands."""
    return [a.title for a in actions]


@pytest.mark.asyncio
async def test_an_alternative_passing_version_is_offered_and_replaces_the_proposals_line(
    stats_project: Path, tmp_path: Path
) -> None:
    reply = "1. `return min(x, hi)`\n2. `return hi`"
    with ScriptedModelServer([{"content": reply}]) as model:
        settings = {**scripted_settings(model), **SMALL}
        editor = await start_editor(stats_project, tmp_path / "cache", init_options={"lspAgent": settings})
        try:
            uri = editor.open("pkg/stats.py")
            run_id = await editor.ask(TASK)
            done = await editor.wait_event(run_id, "done", timeout=180)
            assert done["status"] == "success" and done["pending"] is True, done
            [context] = [e for e in editor.run_events(run_id, "context") if e.get("what") == "alternatives"]
            assert context["versions"] == [CHOSEN, OTHER] and context["line"] == BUGGY_LINE

            actions = await code_actions_at(editor, uri, BUGGY_LINE - 1)
            offered = [a for a in actions if a.title.startswith("Use alternative")]
            assert titles(offered) == ["Use alternative: `return min(x, hi)` (it passes the tests too)"]
            assert not [a for a in await code_actions_at(editor, uri, 3) if a.title.startswith("Use alt")]
            [command] = offered
            result = await editor.command(command.command, *command.arguments)
            assert (
                result["version"] == OTHER and result["previous"] == CHOSEN and result["state"] == "pending"
            )
            assert result["summary"].startswith(
                f"Using `return min(x, hi)` at pkg/stats.py line {BUGGY_LINE} instead of `return hi` (chosen in "
                "the editor; it passes the tests too). pkg/stats.py line"
            )
            [event] = editor.run_events(run_id, "alternative")
            assert event["version"] == OTHER and event["summary"] == result["summary"]

            actions = await code_actions_at(editor, uri, BUGGY_LINE - 1)
            assert "Use alternative: `return hi` (it passes the tests too)" in titles(actions)  # back again
            [apply] = [a for a in actions if a.title.startswith("Apply agent edit")]
            assert apply.title.startswith("Apply agent edit: Using `return min(x, hi)`")
            changed = [e.new_text for c in apply.edit.document_changes for e in c.edits]
            assert changed and all("min(x, hi)" in text for text in changed), changed
            status = await editor.command("lspAgent.status")
            assert status["pending"][0]["summary"].startswith("Using `return min(x, hi)`")

            with pytest.raises(Exception, match="not another version that passed the tests"):
                await editor.command(command.command, {**command.arguments[0], "version": "        return 0"})
            editor.change(
                uri, STATS.replace("        return lo\n    return x", "        return -1\n    return x")
            )
            back = {**command.arguments[0], "version": CHOSEN}
            with pytest.raises(Exception, match="no longer applies"):
                await editor.command(command.command, back)
            assert editor.run_events(run_id, "alternative") == [event]  # refused: nothing changed
        finally:
            await stop_editor(editor)
    assert (stats_project / "pkg" / "stats.py").read_text() == STATS  # nothing applied
