"""Secret-file patterns and the redaction of secret values."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.settings_sources import load_settings
from lsp_agent.workspace.redaction import Redactor, collect_secrets, looks_secret_name, worth_hiding
from lsp_agent.workspace.secrets import SecretFileError, SecretFiles, secret_files_of
from lsp_agent.workspace.walk import is_ignored, walk_workspace

KEY = "sk-proj-Zq8RkT3vYw0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.mark.parametrize(
    "rel",
    [
        ".env",
        "sub/dir/.env",
        ".env.local",
        ".env.production",
        "certs/server.pem",
        "tls.key",
        "id_rsa",
        "home/.ssh/id_rsa.pub",
        "id_ed25519",
        ".netrc",
        ".git-credentials",
        "deploy/store.p12",
        ".pgpass",
    ],
)
def test_default_patterns_make_these_secret(rel: str) -> None:
    assert SecretFiles().is_secret(rel)


@pytest.mark.parametrize(
    "rel",
    [
        ".env.example",
        ".env.sample",
        ".env.template",
        "env.py",
        "src/keys.py",
        "docs/.environment",
        "a.pem.md",
    ],
)
def test_default_patterns_leave_these_readable(rel: str) -> None:
    assert not SecretFiles().is_secret(rel)


def test_configured_patterns_extend_and_override_the_defaults() -> None:
    secrets = SecretFiles(["config/prod.yaml", "vault/", "!.env.local", ".env.example"])
    assert secrets.is_secret("config/prod.yaml") and not secrets.is_secret("other/config/prod.yaml")
    assert secrets.is_secret("vault/a.txt") and secrets.is_secret("vault", is_dir=True)
    assert not secrets.is_secret(".env.local")  # a negation makes a default secret readable again
    assert secrets.is_secret(".env.example")  # and a listed template becomes secret
    assert secrets.is_secret(".env")
    assert secrets.index_excludes() == ["config/prod.yaml", "vault/", ".env.example"]


def test_check_names_the_setting_and_what_to_do() -> None:
    with pytest.raises(SecretFileError) as info:
        SecretFiles().check("notes.txt", ".env")
    message = str(info.value)
    assert message.startswith("refused: .env is a secret file (secretFiles)")
    assert "its contents are never sent to the model" in message and "ask the user" in message


def test_the_setting_is_read_from_editor_settings_and_bad_values_are_named(tmp_path: Path) -> None:
    settings, errors = load_settings(tmp_path, client={"lspAgent": {"secretFiles": ["*.secret"]}}, environ={})
    assert errors == [] and settings.secret_files == ["*.secret"]
    assert secret_files_of(settings).is_secret("db.secret")
    settings, errors = load_settings(tmp_path, client={"secretFiles": 5}, environ={})
    assert settings.secret_files == [] and "secret_files" in errors[0]


def test_walks_and_is_ignored_leave_secret_files_out(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    for rel in (".env", "pkg/.env.local", "pkg/a.py", "server.pem", ".env.example", "vault.txt"):
        (tmp_path / rel).write_text("x\n")
    walked = sorted(p.relative_to(tmp_path).as_posix() for p in walk_workspace(tmp_path))
    assert walked == [".env.example", "pkg/a.py", "vault.txt"]
    configured = SecretFiles(["vault.txt"])
    assert [p.name for p in walk_workspace(tmp_path, secrets=configured)] == [".env.example", "a.py"]
    assert is_ignored(tmp_path, tmp_path / "pkg/.env.local") and not is_ignored(
        tmp_path, tmp_path / "pkg/a.py"
    )
    assert is_ignored(tmp_path, tmp_path / "vault.txt", secrets=configured)


def test_secret_variable_names() -> None:
    for name in (
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "DEPLOY_KEY",
        "SENTRY_DSN",
    ):
        assert looks_secret_name(name), name
    for name in (
        "PWD",
        "OLDPWD",
        "HOME",
        "PATH",
        "KEYBOARD_LAYOUT",
        "SSH_AUTH_SOCK",
        "TOKENIZERS_PARALLELISM",
    ):
        assert not looks_secret_name(name), name


def test_short_and_common_values_are_not_worth_hiding(tmp_path: Path) -> None:
    for value in ("1", "true", "false", "8080", "12345678901", "localhost", "production", str(tmp_path)):
        assert not worth_hiding(value), value
    assert worth_hiding(KEY) and worth_hiding("hunter2hunter2")


def test_values_come_from_the_api_key_setting_the_environment_and_top_level_env_files(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        f"OPENAI_API_KEY={KEY}\nDEBUG=true\nDATABASE_URL=postgres://u:pw-93kd@db/x\n"
    )
    (tmp_path / ".env.local").write_text("LOCAL_ONLY=local-value-123\n")
    (tmp_path / ".env.example").write_text(
        "OPENAI_API_KEY=your-key-here-please\n"
    )  # a template: not a secret
    environ = {"GITHUB_TOKEN": "ghp_abcdefghijklmnop", "HOME": "/root", "LANG": "C.UTF-8", "DB_PASSWORD": "1"}
    found = collect_secrets("configured-key-0001", environ, tmp_path)
    assert found == {
        KEY: "OPENAI_API_KEY",
        "postgres://u:pw-93kd@db/x": "DATABASE_URL",
        "local-value-123": "LOCAL_ONLY",
        "ghp_abcdefghijklmnop": "GITHUB_TOKEN",
        "configured-key-0001": "apiKey",
    }


def test_redaction_replaces_values_with_a_named_marker() -> None:
    redactor = Redactor({KEY: "OPENAI_API_KEY", "hunter2hunter2": "DB_PASSWORD", "true": "FLAG"})
    assert redactor.names == ["DB_PASSWORD", "OPENAI_API_KEY"]
    text = f'key = "{KEY}"\npassword: hunter2hunter2, flag true'
    assert (
        redactor.redact(text)
        == 'key = "[REDACTED:OPENAI_API_KEY]"\npassword: [REDACTED:DB_PASSWORD], flag true'
    )


def test_pieces_left_by_a_cut_are_redacted_too() -> None:
    redactor = Redactor({KEY: "OPENAI_API_KEY"})
    head, tail = KEY[:20], KEY[-14:]
    assert redactor.redact(f"{head}… [line cut]") == "[REDACTED:OPENAI_API_KEY]… [line cut]"
    assert redactor.redact(f"… omitted …{tail}\n") == "… omitted …[REDACTED:OPENAI_API_KEY]\n"
    assert redactor.redact("sk-proj- is a common prefix") == "sk-proj- is a common prefix"
    assert KEY not in redactor.redact(KEY * 3) and "REDACTED" in redactor.redact(KEY * 3)


def test_an_empty_redactor_returns_text_unchanged() -> None:
    redactor = Redactor({})
    assert not redactor and redactor.redact("anything") == "anything"


def test_default_patterns_name_files_not_directories() -> None:
    secrets = SecretFiles()
    assert not secrets.is_secret(".env", is_dir=True)  # a virtualenv called .env
    assert not secrets.is_secret(".env/lib/python3.11/site.py")
    assert secrets.is_secret(".env/.env")
    assert SecretFiles([".env/"]).is_secret(".env/lib/site.py")  # unless the user says so
