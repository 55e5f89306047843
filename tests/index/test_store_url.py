"""Team index URLs in messages: passwords redacted everywhere, stores told apart."""

from __future__ import annotations

import pytest

from lsp_agent.index.store_url import describe, is_team_url, redact
from lsp_agent.index.team_identity import _strip_credentials
from lsp_agent.index.team_sync import team_link


def test_passwords_in_urls_keywords_and_by_value_are_redacted() -> None:
    url = "postgresql://ci:p%40ss-w0rd@db.example.com:6432/code?sslmode=verify-full&password=alt-secret"
    message = f"failed to connect to {url}; conninfo host=db password=kw-secret user=ci (p@ss-w0rd)"
    out = redact(message, "postgresql://ci:p@ss-w0rd@db.example.com/code")
    assert "p%40ss-w0rd" not in out and "kw-secret" not in out and "alt-secret" not in out
    assert "p@ss-w0rd" not in out
    assert "postgresql://ci:***@db.example.com:6432/code" in out and "password=***" in out


def test_describe_names_user_host_port_and_database_only() -> None:
    assert (
        describe("postgresql://ci:pw@db.example.com:6432/code?sslmode=require")
        == "ci@db.example.com:6432/code"
    )
    assert describe("postgresql:///code?host=/run/pg") == "/run/pg/code"


def test_store_settings_pick_the_backend_and_reject_other_urls_without_their_password() -> None:
    assert is_team_url("postgres://x@h/db") and is_team_url(" POSTGRESQL://h/db")
    assert team_link(None) is None and team_link("sqlite") is None
    with pytest.raises(ValueError, match="not a postgresql:// URL") as caught:
        team_link("mysql://bob:hunter22@db/x")
    assert "hunter22" not in str(caught.value)


def test_git_remote_credentials_never_become_the_repository_name() -> None:
    assert _strip_credentials("https://x-token:ghp_abc123@github.com/o/r.git") == "https://github.com/o/r.git"
    assert _strip_credentials("git@github.com:o/r.git") == "git@github.com:o/r.git"


def test_the_index_store_setting_reaches_every_front_ends_index_config(tmp_path, monkeypatch) -> None:
    from lsp_agent.assembly import index_config
    from lsp_agent.settings_sources import load_settings

    monkeypatch.setenv("LSP_AGENT_INDEX_STORE", "postgresql://ci@db/code?sslmode=require")
    settings, errors = load_settings(tmp_path)
    assert errors == [] and index_config(settings).store == "postgresql://ci@db/code?sslmode=require"
    settings, _ = load_settings(tmp_path, flags={"index_store": "sqlite"})
    assert index_config(settings).store == "sqlite"


def test_a_tree_is_published_under_its_origin_and_head_else_its_content(tmp_path) -> None:
    import subprocess

    from lsp_agent.index.team_identity import tree_identity

    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    keys = {"a.py": "k1"}
    repo, commit = tree_identity(tree, keys)
    assert repo == "proj" and commit.startswith("tree-")
    assert tree_identity(tree, {"a.py": "k2"})[1] != commit  # another content, another snapshot

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    git("remote", "add", "origin", "https://bot:tok3n@example.com/team/proj.git")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one")
    assert tree_identity(tree, keys) == ("https://example.com/team/proj.git", git("rev-parse", "HEAD"))
    (tree / "a.py").write_text("x = 2\n")
    repo, commit = tree_identity(tree, keys)
    assert commit.startswith(git("rev-parse", "HEAD") + "-dirty-")
