"""The one conversation store: round trips, the current conversation of a folder, damage, old formats, secrets."""

from __future__ import annotations

import json
import logging
import os
from types import SimpleNamespace

from lsp_agent.agent.conversation.memory import ConversationSummary
from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.store import ConversationStore
from lsp_agent.workspace.redaction import Redactor


def _session() -> Session:
    session = Session("my/session")
    session.record("  task   one\n done ")
    session.begin("r1", "fix add", {"task": "fix add"})
    answer = SimpleNamespace(answer="add fixed", stop_reason="complete", proposal=None)
    session.record_run("r1", "fix add", answer)
    session.record("user rejected changes of run r1: calc.py; reason: keep the old API")
    return session


def test_a_conversation_round_trips_with_its_folder_and_summary(tmp_path):
    store = ConversationStore(tmp_path / "sessions")
    session = _session()
    session.fold(session.exchanges[:1], ConversationSummary("they fixed add", 1, "openai/x", 5.0))
    path = store.save(session, root=tmp_path / "proj", front_end="lsp")
    assert path.name == "my_session.json"
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]  # the temporary file was renamed
    data = json.loads(path.read_text())
    assert data["format"] == "lsp-agent-conversation" and data["version"] == 1 and data["frontEnd"] == "lsp"
    loaded = store.load("my/session")
    assert (
        loaded.root == tmp_path / "proj" and loaded.front_end == "lsp" and loaded.session.id == "my/session"
    )
    exchange = loaded.session.exchanges[0]
    assert (exchange.run_id, exchange.answer, exchange.request, exchange.folded) == (
        "r1",
        "add fixed",
        {"task": "fix add"},
        True,
    )
    assert exchange.notes == ["user rejected changes of run r1: calc.py; reason: keep the old API"]
    assert loaded.session.notes == ["task one done"]
    assert loaded.session.summary == ConversationSummary("they fixed add", 1, "openai/x", 5.0)
    assert store.load("never-saved") is None


def test_the_current_conversation_is_kept_per_folder(tmp_path):
    store = ConversationStore(tmp_path)
    one, two = tmp_path / "a" / "proj", tmp_path / "b" / "proj"  # same name, different folders
    assert store.current_id(one) is None
    store.set_current(one, "c1")
    store.set_current(two, "c2")
    assert (store.current_id(one), store.current_id(two)) == ("c1", "c2")


def test_a_damaged_file_is_logged_kept_aside_and_gives_an_empty_conversation(tmp_path, caplog):
    store = ConversationStore(tmp_path)
    store.path_of("c1").write_text("{broken")
    with caplog.at_level(logging.WARNING):
        assert store.load("c1") is None
    assert "unreadable" in caplog.text and "starting conversation c1 empty" in caplog.text
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("c1.json.damaged")]
    assert len(kept) == 1 and kept[0].read_text() == "{broken"
    store.path_of("c2").write_text(json.dumps({"id": "c2", "version": 99}))
    with caplog.at_level(logging.WARNING):
        assert store.load("c2") is None
    assert "newer lsp-agent" in caplog.text


def test_an_unreadable_file_gives_an_empty_conversation(tmp_path, caplog):
    store = ConversationStore(tmp_path)
    store.path_of("c1").write_bytes(b"\xff\xfe not utf-8")
    with caplog.at_level(logging.WARNING):
        assert store.load("c1") is None
    assert "unreadable" in caplog.text


def test_files_of_older_versions_are_read(tmp_path):
    store = ConversationStore(tmp_path)
    (tmp_path / "old.json").write_text(json.dumps({"id": "old", "exchanges": ["run a: task 'x' ended", 5]}))
    old = store.load("old").session
    assert old.notes == ["run a: task 'x' ended"] and old.exchanges == []
    (tmp_path / "acp").mkdir()
    memory = _session().to_dict()
    acp = {"id": "s1", "cwd": "/w", "mode": "plan", "memory": memory, "history": [{"x": 1}]}
    (tmp_path / "acp" / "s1.json").write_text(json.dumps(acp))
    loaded = store.load("s1")
    assert loaded.root is not None and str(loaded.root) == "/w" and loaded.front_end == "acp"
    assert loaded.extra == {"acp": {"mode": "plan", "history": [{"x": 1}]}}
    assert [e.run_id for e in loaded.session.exchanges] == ["r1"]


def test_secret_values_are_not_written_in_clear(tmp_path):
    store = ConversationStore(tmp_path)
    session = Session("c1")
    secret = "sk-live-abcdefghijklmnop"
    session.begin("r1", f"why does {secret} fail?", {"task": f"why does {secret} fail?"})
    redact = Redactor({secret: "OPENAI_API_KEY"}).redact
    path = store.save(
        session, root=tmp_path, front_end="cli", extra={"acp": {"history": [secret]}}, redact=redact
    )
    text = path.read_text()
    assert secret not in text and "[REDACTED:OPENAI_API_KEY]" in text
    assert session.exchanges[0].task == f"why does {secret} fail?"  # the live conversation is unchanged
    if os.name == "posix":
        assert path.stat().st_mode & 0o077 == 0  # private to the user


def test_a_store_inside_a_workspace_is_neither_indexed_nor_searched(tmp_path):
    from lsp_agent.workspace.walk import is_ignored, walk_workspace

    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    store = ConversationStore(root / "cache" / "lsp-agent" / "sessions")  # XDG_CACHE_HOME=proj/cache
    path = store.save(_session(), root=root, front_end="lsp")
    assert [p.relative_to(root).as_posix() for p in walk_workspace(root)] == ["src/a.py"]
    assert is_ignored(root, path)
