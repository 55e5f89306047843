"""The pieces under session/list, config options and authenticate, on their own: titles, listings of stored records
of every version, cursors, the re-read cache, option validation, the key file, redaction of lsp-agent's settings."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.acp import auth
from lsp_agent.acp.config_options import apply_option, config_options, model_choices, session_settings
from lsp_agent.acp.session_list import SessionLister, decode_cursor, encode_cursor, make_title, summarize
from lsp_agent.acp.sessions import AcpSession
from lsp_agent.agent.conversation.session import Session
from lsp_agent.config import Settings
from lsp_agent.workspace.redaction import collect_secrets


def test_titles_are_the_first_line_collapsed_and_cut() -> None:
    assert make_title("\n\n  Fix   the bug\nin calc.py") == "Fix the bug"
    long = make_title("word " * 40)
    assert long is not None and len(long) == 80 and long.endswith("…")
    assert make_title("  \n ") is None


def test_listings_of_every_record_version() -> None:
    current = {
        "id": "a",
        "root": "/w",
        "frontEnd": "cli",
        "saved": 10.0,
        "exchanges": [{"runId": "r", "task": "Do X"}],
    }
    assert summarize(current, "a", 5.0).title == "Do X"
    assert summarize({**current, "acp": {"title": "Named"}}, "a", 5.0).title == "Named"
    legacy = {"cwd": "/w", "memory": {"exchanges": [{"runId": "r", "task": "Old"}]}, "mode": "code"}
    entry = summarize(legacy, "old-id", 7.0)
    assert (entry.session_id, entry.title, entry.updated, entry.front_end) == ("old-id", "Old", 7.0, "acp")
    assert summarize({"id": "b", "exchanges": []}, "b", 1.0) is None  # no folder: nothing to list it under
    assert summarize({**current, "id": "../escape"}, "a", 1.0).session_id == "a"  # the file name wins


def test_cursors_round_trip_and_foreign_ones_are_refused() -> None:
    entry = summarize({"id": "a", "root": "/w", "saved": 12.5}, "a", 0.0)
    assert decode_cursor(encode_cursor(entry)) == entry.sort_key()
    for bad in ("", "%%%", "bnVsbA", encode_cursor(entry)[:-3]):
        with pytest.raises(ValueError, match="invalid cursor"):
            decode_cursor(bad or "x")


def test_the_lister_rereads_only_changed_files_and_forgets_deleted_ones(tmp_path: Path) -> None:
    def write(name: str, task: str, saved: float) -> Path:
        path = tmp_path / f"{name}.json"
        record = {"id": name, "root": "/w", "saved": saved, "exchanges": [{"runId": "r", "task": task}]}
        path.write_text(json.dumps(record))
        return path

    write("one", "first", 1.0)
    two = write("two", "second", 2.0)
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "last-w-123.txt").write_text("one")
    lister = SessionLister(tmp_path)
    assert [e.session_id for e in lister.listings()] == ["two", "one"]
    write("one", "first again", 3.0)
    os.utime(tmp_path / "one.json", ns=(1, 10**18))  # a different time: re-read
    assert [(e.session_id, e.title) for e in lister.listings()] == [("one", "first again"), ("two", "second")]
    two.unlink()
    assert [e.session_id for e in lister.listings()] == ["one"]
    assert lister.page(cwd="/elsewhere") == ([], None)


def session(tmp_path: Path) -> AcpSession:
    return AcpSession("s", tmp_path, Session("s"), None, None)  # type: ignore[arg-type]


def test_options_validate_what_a_client_sends(tmp_path: Path) -> None:
    settings = Settings(model="openai/a", models=["openai/b", "openai/a"])
    s = session(tmp_path)
    assert model_choices(settings) == ["openai/a", "openai/b"]
    for config_id, value, message in (
        ("model", "openai/c", "not offered"),
        ("mode", "yolo", "unknown mode"),
        ("temperature", "1", "unknown config option"),
        ("model", True, "takes a string"),
    ):
        with pytest.raises(ValueError, match=message):
            apply_option(s, settings, config_id, value)
    apply_option(s, settings, "model", "openai/b")
    assert session_settings(s, settings).model == "openai/b"
    assert (
        session_settings(s, Settings(model="openai/a")).model == "openai/a"
    )  # no longer offered: the default
    assert [o.id for o in config_options(s, Settings())] == ["mode"]  # no model configured: no model option


def test_the_key_file_is_private_and_replaced_whole(tmp_path: Path) -> None:
    path = auth.store_key("first-key-value", tmp_path / "permissions")
    auth.store_key("second-key-value", tmp_path / "permissions")
    assert auth.stored_key(tmp_path / "permissions") == "second-key-value"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["api-key"]  # no temporary file left behind
    auth.authenticate("api-key", {"LSP_AGENT_API_KEY": " third-key-value "}, tmp_path / "permissions")
    assert auth.stored_key(tmp_path / "permissions") == "third-key-value"


def test_lsp_agents_own_dotenv_settings_are_not_secrets_but_its_key_is(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "LSP_AGENT_MODELS=openai/gpt-4o,openai/o3-mini\nLSP_AGENT_API_KEY=sk-abcdefghijkl\nDB_URL=postgres://u:p@h/db\n"
    )
    hidden = collect_secrets(None, {}, tmp_path)
    assert "openai/gpt-4o,openai/o3-mini" not in hidden
    assert hidden["sk-abcdefghijkl"] == "LSP_AGENT_API_KEY" and "postgres://u:p@h/db" in hidden


def test_a_stored_session_never_holds_the_given_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acp import helpers

    from lsp_agent.acp.sessions import SessionStore

    monkeypatch.setattr(auth, "key_path", lambda directory=None: tmp_path / "permissions" / "api-key")
    auth.store_key("sk-given-once-0123456789")
    s = session(tmp_path)
    s.record(helpers.update_user_message_text("my key is sk-given-once-0123456789, keep it"))
    store = SessionStore(tmp_path / "sessions")
    store.save(s)
    text = store.path_of("s").read_text()
    assert "my key is [REDACTED:apiKey], keep it" in text and "sk-given-once" not in text


def test_mcp_prompt_arguments_by_order_by_name_and_whole() -> None:
    from lsp_agent.acp.mcp_commands import prompt_arguments
    from lsp_agent.mcp.listing import RemotePrompt

    two = RemotePrompt("review", "Review", [("path", "", True), ("focus", "", False)])
    assert prompt_arguments("r", two, "a.py") == {"path": "a.py"}
    assert prompt_arguments("r", two, 'focus="the style" path=a.py') == {"focus": "the style", "path": "a.py"}
    assert prompt_arguments("r", two, "a.py speed") == {"path": "a.py", "focus": "speed"}
    for bad, message in (("", "missing path"), ("a b c", "unexpected 'c'"), ('path="open', "quotation")):
        with pytest.raises(ValueError, match=message):
            prompt_arguments("r", two, bad)
    one = RemotePrompt("ask", "Ask", [("question", "", True)])
    assert prompt_arguments("a", one, "why is add  wrong?") == {"question": "why is add  wrong?"}
    assert prompt_arguments("a", RemotePrompt("s", "S"), "") == {}
