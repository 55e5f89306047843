"""The remembered permission store, the permission gate's order of checks, and `lsp-agent permissions`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.agent.consent.permissions import PermissionGate, SessionPermissions, denial_message
from lsp_agent.agent.consent.store import PermissionStore, Rule, command_prefix, rule_for
from lsp_agent.cli.main import main


def answering(*answers: str, log: list | None = None):
    """An asker that answers in order and records what it was asked."""
    queue = list(answers)

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        if log is not None:
            log.append((tool, arguments))
        return queue.pop(0)

    return ask


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (["pytest", "-q", "tests/x"], ("pytest", "-q")),
        (["git", "status"], ("git", "status")),
        (["rm", "-rf", "build/"], ("rm", "-rf")),
        (["ls", "*.py"], ("ls",)),
        (["sh", "-c", "pytest; rm -rf ~"], ("sh", "-c")),
        (["python", "./setup.py"], ("python",)),
    ],
)
def test_command_prefix_stops_before_the_first_operand(argv, prefix):
    assert command_prefix(argv) == prefix


def test_rules_match_whole_argv_words_and_deny_wins(tmp_path):
    store = PermissionStore(tmp_path / "ws", tmp_path / "config")
    store.remember(rule_for("run_command", {"argv": ["pytest", "-q", "tests/x"]}, "allow"))
    assert store.decide("run_command", {"argv": ["pytest", "-q", "tests/other"]}).decision == "allow"
    assert store.decide("run_command", {"argv": ["pytest"]}) is None
    assert store.decide("run_command", {"argv": ["pytest", "-qq"]}) is None, "whole words, not characters"
    assert store.decide("run_command", {"argv": ["rm", "-rf", "/"]}) is None
    store.remember(Rule("run_command", "allow", ("git",)))
    store.remember(Rule("run_command", "deny", ("git", "push")))
    assert store.decide("run_command", {"argv": ["git", "status"]}).decision == "allow"
    assert store.decide("run_command", {"argv": ["git", "push", "origin"]}).decision == "deny"
    store.remember(rule_for("run_tests", {"target": "unit"}, "allow"))
    assert store.decide("run_tests", {"target": "anything"}).key == "run_tests", "other tools: per tool"
    assert store.decide("run_python", {"code": "1"}) is None


def test_store_file_round_trip_revoke_and_damage(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "my ws"
    ws.mkdir()
    store = PermissionStore(ws)
    assert store.path.parent == tmp_path / "xdg" / "lsp-agent" / "permissions"
    assert PermissionStore(tmp_path / "other").path != store.path, "one file per workspace"
    store.remember(rule_for("stamp", {}, "allow"))
    store.remember(rule_for("stamp", {}, "deny"))  # the same key is replaced, not duplicated
    data = json.loads(store.path.read_text())
    assert data["workspace"] == str(ws.resolve()) and [r["decision"] for r in data["rules"]] == ["deny"]
    assert [p.name for p in store.path.parent.iterdir()] == [store.path.name], "no temporary file left"
    assert store.revoke("nothing") == [] and len(store.rules()) == 1
    assert [r.key for r in store.revoke("stamp")] == ["stamp"] and store.rules() == []
    store.path.write_text("{broken")
    assert store.rules() == [], "a damaged file means no remembered answers"
    store.path.write_text(
        json.dumps({"rules": [{"tool": "x", "decision": "maybe"}, {"tool": "y", "decision": "allow"}]})
    )
    assert [r.key for r in store.rules()] == ["y"], "bad entries are dropped"


async def test_gate_order_settings_store_session_then_asker(tmp_path):
    store = PermissionStore(tmp_path / "ws", tmp_path / "config")
    asked: list = []
    gate = PermissionGate(
        {"denied": "deny"}, answering("reject_once", "allow_always", log=asked), store=store
    )
    assert (await gate.check("read_file", "none", {})).allowed
    assert (await gate.check("denied", "exec", {})).source == "settings"
    first = await gate.check("run_command", "exec", {"argv": ["make", "test"]})
    assert not first.allowed and first.answer == "reject_once"
    again = await gate.check("run_command", "exec", {"argv": ["make", "test", "-j2"]})
    assert not again.allowed and again.source == "session" and len(asked) == 1
    assert "already declined it in this session" in denial_message("run_command", "exec", again)
    other = await gate.check("run_command", "exec", {"argv": ["pytest", "-q"]})
    assert other.allowed and other.answer == "allow_always" and len(asked) == 2
    fresh = PermissionGate(
        {}, answering(), session=SessionPermissions(), store=store
    )  # a new session, same store
    remembered = await fresh.check("run_command", "exec", {"argv": ["pytest", "-q", "tests/a.py"]})
    assert (
        remembered.allowed
        and remembered.source == "remembered"
        and remembered.note == "run_command: pytest -q"
    )
    settings_first = PermissionGate({"run_command": "deny"}, answering(), store=store)
    assert not (await settings_first.check("run_command", "exec", {"argv": ["pytest", "-q"]})).allowed


async def test_dismissed_and_legacy_answers(tmp_path):
    store = PermissionStore(tmp_path / "ws", tmp_path / "config")
    gate = PermissionGate({}, answering("dismissed", "bogus", "once", "session"), store=store)
    assert (await gate.check("t", "exec", {})).answer == "dismissed"
    assert (await gate.check("t", "exec", {})).answer == "dismissed", (
        "asked again: dismissing is not remembered"
    )
    assert (await gate.check("t", "exec", {})).allowed  # "once" from older askers
    assert (await gate.check("t", "exec", {})).allowed  # "session": allowed for the session
    assert (await gate.check("t", "exec", {})).source == "session"
    assert store.rules() == []


async def test_an_unwritable_store_path_keeps_the_answer_for_the_session(tmp_path):
    blocker = tmp_path / "config"
    blocker.write_text("a file where the directory should be")
    gate = PermissionGate(
        {}, answering("reject_always"), store=PermissionStore(tmp_path / "ws", blocker / "p")
    )
    decision = await gate.check("t", "exec", {})
    assert not decision.allowed and "kept for this session only" in decision.note
    assert (await gate.check("t", "exec", {})).source == "session", "still not asked again in this session"


def test_cli_lists_and_revokes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["permissions", "list", "--repo", str(ws)]) == 0
    assert "no remembered permissions" in capsys.readouterr().out
    store = PermissionStore(ws)
    store.remember(rule_for("run_command", {"argv": ["pytest", "-q", "tests/x"]}, "allow"))
    store.remember(rule_for("run_python", {"code": "print(1)"}, "deny"))
    assert main(["permissions", "list", "--repo", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "allow  run_command: pytest -q" in out and "deny   run_python" in out and str(store.path) in out
    assert main(["permissions", "list", "--repo", str(ws), "--json"]) == 0
    assert [r["key"] for r in json.loads(capsys.readouterr().out)["rules"]] == [
        "run_command: pytest -q",
        "run_python",
    ]
    assert main(["permissions", "revoke", "run_command:  pytest  -q", "--repo", str(ws)]) == 0
    assert "revoked: allow run_command: pytest -q" in capsys.readouterr().out
    assert main(["permissions", "revoke", "nope", "--repo", str(ws)]) == 1
    assert "no remembered permission 'nope'" in capsys.readouterr().err
    assert main(["permissions", "revoke", "--repo", str(ws)]) == 2
    assert main(["permissions", "revoke", "--all", "--repo", str(ws)]) == 0
    assert store.rules() == []
    assert main(["permissions", "list", "--repo", str(Path(ws / "missing"))]) == 2


def test_cli_ask_follows_remembered_answers_without_a_terminal(tmp_path, monkeypatch, capsys):
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("A = 1\n")
    PermissionStore(ws).remember(rule_for("run_command", {"argv": ["echo", "-n", "tests/x"]}, "allow"))
    run = {"name": "run_command", "arguments": {"argv": ["echo", "-n", "tests/remembered"]}}
    other = {"name": "run_command", "arguments": {"argv": ["printf", "not-remembered"]}}
    done = {"name": "task_complete", "arguments": {"summary": "ran"}}
    with ScriptedModelServer([{"content": "", "tool_calls": [run, other, done]}]) as server:
        status = main(
            [
                "ask",
                "run things",
                "--repo",
                str(ws),
                "--model",
                "openai/scripted",
                "--api-base",
                server.base_url,
            ]
            + ["--api-key", "test", "--tool-calling", "native", "--no-color"]
        )
    out = capsys.readouterr().out
    assert status == 0
    assert "permission for run_command: allowed" in out and "tests/remembered" in out, out
    assert "permission for run_command: denied" in out and "nobody is available to approve it" in out
    assert (ws / "a.py").read_text() == "A = 1\n" and sorted(p.name for p in ws.iterdir()) == ["a.py"]
