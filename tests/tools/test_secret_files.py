"""Secret files through the real tools: refused, skipped by searches, marked in listings; values redacted."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

KEY = "sk-proj-Zq8RkT3vYw0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
TOKEN = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
REFUSAL = "is a secret file (secretFiles); its contents are never sent to the model"


@pytest.fixture
def secret_ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tool workspace plus secret files and a source file that hard-codes an environment token."""
    monkeypatch.setenv("SERVICE_API_TOKEN", TOKEN)
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\nDEBUG=true\n")
    (workspace / ".env.example").write_text("OPENAI_API_KEY=\n")
    (workspace / "src" / ".env.local").write_text("LOCAL_SECRET=local-secret-value-42\n")
    (workspace / "certs").mkdir()
    (workspace / "certs" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\nMIIEvQ\n")
    (workspace / "src" / "settings.py").write_text(
        f'import os\n\nOPENAI_API_KEY = os.environ["OPENAI_API_KEY"]\nTOKEN = "{TOKEN}"\n'
        f"LONG = '{'x' * 150}{TOKEN}'\n"
    )
    (workspace / "link_to_env").symlink_to(workspace / ".env")
    return workspace


@pytest.mark.parametrize(
    "path", [".env", "./.env", "src/.env.local", "certs/server.pem", "link_to_env", "src/../.env"]
)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("read_file", {}),
        ("get_file_info", {}),
        ("search_text", {"pattern": "KEY"}),
        ("write_file", {"content": "OPENAI_API_KEY=mine\n"}),
        ("edit_file", {"old_text": "DEBUG=true", "new_text": "DEBUG=false"}),
        ("delete_file", {}),
    ],
)
def test_every_file_tool_refuses_secret_files(secret_ws, ctx, call, tool, extra, path):
    before = (secret_ws / ".env").read_text()
    res = call(ctx, tool, {"path": path, **extra})
    assert not res.ok and res.output.startswith("Error: refused: ") and REFUSAL in res.output, res.output
    assert KEY not in res.output and "MIIEvQ" not in res.output
    assert ctx.overlay.changed_paths() == []
    assert (secret_ws / ".env").read_text() == before


def test_creating_a_new_secret_file_is_refused_too(secret_ws, ctx, call):
    res = call(ctx, "write_file", path="deploy/.env.production", content="A=1\n")
    assert not res.ok and REFUSAL in res.output and ctx.overlay.changed_paths() == []


def test_env_templates_stay_readable(secret_ws, ctx, call):
    res = call(ctx, "read_file", path=".env.example")
    assert res.ok and res.output == "1: OPENAI_API_KEY="


def test_list_files_shows_secret_names_marked(secret_ws, ctx, call):
    out = call(ctx, "list_files").output.splitlines()
    assert ".env  [secret file (secretFiles): contents never shown]" in out
    assert ".env.example" in out and "link_to_env  [secret file (secretFiles): contents never shown]" in out
    deep = call(ctx, "list_files", pattern="**/*").output
    assert "src/.env.local  [secret file (secretFiles): contents never shown]" in deep
    assert "certs/server.pem  [secret file" in deep and KEY not in deep


def test_search_text_skips_secret_files_and_redacts_values_elsewhere(secret_ws, ctx, call):
    out = call(ctx, "search_text", pattern="OPENAI_API_KEY").output
    assert out.splitlines() == [
        ".env.example:1:OPENAI_API_KEY=",
        'src/settings.py:3:OPENAI_API_KEY = os.environ["OPENAI_API_KEY"]',
    ]
    out = call(ctx, "search_text", pattern="TOKEN").output
    assert TOKEN not in out and TOKEN[:12] not in out and TOKEN[-12:] not in out
    assert 'src/settings.py:4:TOKEN = "[REDACTED:SERVICE_API_TOKEN]"' in out
    end = call(ctx, "search_text", pattern="'$", regex=True, path="src/settings.py").output
    assert end.startswith("src/settings.py:5:…") and end.endswith(
        "x[REDACTED:SERVICE_API_TOKEN]'"
    )  # cut after
    assert "No matches for" in call(ctx, "search_text", pattern="PRIVATE KEY").output
    assert "No matches" in call(ctx, "search_text", pattern=KEY[:20]).output


def test_read_file_and_edit_errors_redact_values(secret_ws, ctx, call):
    out = call(ctx, "read_file", path="src/settings.py").output
    assert TOKEN not in out and '4: TOKEN = "[REDACTED:SERVICE_API_TOKEN]"' in out
    res = call(ctx, "edit_file", path="src/settings.py", old_text='TOKEN = "tok_9f8e7d6c"', new_text="x")
    assert not res.ok and "closest candidate" in res.output and TOKEN not in res.output
    cut = call(ctx, "read_file", path="src/settings.py", start_line=5, end_line=5)
    assert TOKEN[:12] not in cut.output


def test_a_hard_link_to_env_reads_with_its_values_redacted(secret_ws, ctx, call):
    os.link(secret_ws / ".env", secret_ws / "notes.txt")  # same file, innocent name: the values still hide
    out = call(ctx, "read_file", path="notes.txt").output
    assert out == "1: OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]\n2: DEBUG=true"


def test_configured_secret_files_extend_the_defaults(secret_ws, call):
    settings = Settings(secret_files=["src/settings.py", "!.env"])
    ctx = ToolContext(root=secret_ws, overlay=Overlay(secret_ws), settings=settings)
    res = call(ctx, "read_file", path="src/settings.py")
    assert not res.ok and "refused: src/settings.py is a secret file" in res.output
    assert "src/settings.py" not in call(ctx, "search_text", pattern="import").output
    res = call(
        ctx, "read_file", path=".env"
    )  # readable again by the user's choice, its values still redacted
    assert res.ok and "OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]" in res.output and KEY not in res.output


def test_the_index_never_holds_secret_files(secret_ws, tmp_path, call):
    (secret_ws / ".env").write_text(f"def leaked_function():\n    return '{KEY}'\n")
    (secret_ws / "vault.py").write_text("def vault_function():\n    return 1\n")
    settings = Settings(secret_files=["vault.py"])
    config = IndexConfig(exclude=["vault.py"])  # how the server and the CLI pass the configured patterns
    with WorkspaceIndex(secret_ws, config, db_path=tmp_path / "index.db") as index:
        index.refresh()
        ctx = ToolContext(root=secret_ws, overlay=Overlay(secret_ws), index=index, settings=settings)
        for query in ("leaked_function", "vault_function", KEY):
            out = call(ctx, "search_code", query=query).output
            assert not re.search(r"^\d+\. (\.env|vault\.py|link_to_env):", out, re.M) and KEY not in out, out
        assert "No symbol named" in call(ctx, "find_symbol", name="leaked_function").output
        repo_map = index.repo_map()
        assert "leaked_function" not in repo_map and "vault_function" not in repo_map
