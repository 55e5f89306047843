"""@mentions, #diagnostics and project rules on a real workspace (and a real index for @symbol)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.agent.conversation import mentions
from lsp_agent.agent.conversation.diagnostics_context import parse_diagnostics, render_diagnostics
from lsp_agent.agent.conversation.mentions import (
    MentionSources,
    mention_names,
    read_text_file,
    resolve_mentions,
)
from lsp_agent.agent.conversation.rules import MAX_RULES_BYTES, load_rules
from lsp_agent.workspace.secrets import secret_files


def sources(root: Path, **extra) -> MentionSources:
    return MentionSources(root, read_text_file, is_secret=secret_files().is_secret, **extra)


def test_mention_syntax_skips_mail_addresses_and_trailing_punctuation():
    task = (
        'see @pkg/calc.py, @"docs/my notes.md" and @Cart.add; mail a@b.com (cc @selection) #diagnostics #diag'
    )
    assert mention_names(task) == ["pkg/calc.py", "docs/my notes.md", "Cart.add", "selection", "#diagnostics"]
    assert mention_names("no mentions here, user@example.com") == []


def test_quoted_paths_line_ranges_and_out_of_range_lines(workspace):
    (workspace / "docs").mkdir()
    (workspace / "docs" / "my notes.md").write_text("one\ntwo\nthree\n")
    out = resolve_mentions(
        'read @"docs/my notes.md" and @pkg/calc.py:2 and @pkg/calc.py:40-50', sources(workspace)
    )
    assert out.attached == ["@docs/my notes.md (3 lines)", "@pkg/calc.py:2-2 (1 lines)"]
    assert "    2      return a - b" in out.blocks[1] and "def add" not in out.blocks[1]
    assert out.problems == ["@pkg/calc.py:40-50: pkg/calc.py has only 6 lines"]


def test_binary_huge_secret_escaping_and_missing_mentions_are_problems(workspace, tmp_path):
    (workspace / "logo.png").write_bytes(b"\x89PNG\x00\x00\x00")
    (workspace / "big.txt").write_text("x" * 2_000_000)
    (workspace / "id_rsa").write_text("-----BEGIN KEY-----\n")
    (tmp_path / "outside.py").write_text("SECRET = 1\n")
    os.symlink(tmp_path / "outside.py", workspace / "link.py")
    task = "@logo.png @big.txt @id_rsa @link.py @/etc/passwd @nothing/here.py @Nope"
    out = resolve_mentions(task, sources(workspace))
    assert out.attached == [] and out.blocks == []
    problems = "\n".join(out.problems)
    assert "@logo.png: logo.png could not be read as text (binary, too large or unreadable)" in problems
    assert "@big.txt: big.txt could not be read as text" in problems
    assert "@id_rsa: id_rsa is a secret file (secretFiles); its contents are never attached" in problems
    assert "@link.py: link.py: a symlink on this path leads outside the workspace root; refused" in problems
    assert "@/etc/passwd: /etc/passwd: outside the workspace root" in problems
    assert "@nothing/here.py: no file named 'nothing/here.py' in the workspace" in problems
    assert "@Nope: no file or symbol named 'Nope' in the workspace; the ask goes on without it" in problems
    assert "SECRET" not in "".join(out.blocks)


def test_symbols_come_from_the_index_and_values_are_redacted(workspace):
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    (workspace / "pkg" / "keys.py").write_text('def token():\n    return "sk-abcdefghijklmnop1234"\n')
    index = WorkspaceIndex(workspace, IndexConfig())
    index.refresh()
    try:
        out = resolve_mentions(
            "why @token and @mul?",
            sources(
                workspace, index=index, redact=lambda t: t.replace("sk-abcdefghijklmnop1234", "[REDACTED:K]")
            ),
        )
    finally:
        index.close()
    assert out.attached == ["@token (pkg/keys.py:1)", "@mul (pkg/calc.py:5)"]
    assert "function token in pkg/keys.py, lines 1-2 (mentioned)" in out.blocks[0]
    assert "[REDACTED:K]" in out.blocks[0] and "sk-abc" not in out.blocks[0]


def test_the_total_size_of_mentions_is_capped(workspace, monkeypatch):
    monkeypatch.setattr(mentions, "TOTAL_CHARS", 1500)
    for name in "abc":
        (workspace / f"{name}.txt").write_text("line of text\n" * 60)
    out = resolve_mentions("@a.txt @b.txt @c.txt", sources(workspace))
    assert (
        out.chars <= 1500 + 100
        and "[cut: the mentions of this ask reached their size limit]" in out.blocks[-1]
    )
    assert out.problems == ["@c.txt (60 lines): not attached, the mentions already fill 1500 characters"]


def test_diagnostics_are_validated_and_rendered_by_file_and_line(tmp_path):
    rng = {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 3}}
    diags = parse_diagnostics(
        [
            {"range": rng, "message": "b", "severity": 1, "source": "mypy", "code": {"href": "x"}},
            {
                "range": {**rng, "start": {"line": 0, "character": 0}},
                "message": "a",
                "uri": (tmp_path / "o.py").as_uri(),
            },
        ]
    )
    text, count = render_diagnostics(diags, tmp_path, "cur.py")
    assert count == 2 and text.splitlines() == [
        "Diagnostics of the current file (from mypy):",
        "cur.py:5: error [mypy]: b",
        "o.py:1: problem: a",
    ]
    for bad in ([{"range": {"start": {"line": -1, "character": 0}}, "message": "x"}], [5], [{"range": rng}]):
        with pytest.raises(ValueError, match=r"must be an LSP diagnostic"):
            parse_diagnostics(bad)


def test_rules_are_loaded_capped_and_refused_with_reasons(workspace):
    assert load_rules(workspace).status_line() == (
        "project rules: none loaded (looked for AGENTS.md and .lsp-agent/rules.md)"
    )
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    (workspace / ".lsp-agent").mkdir()
    (workspace / ".lsp-agent" / "rules.md").write_bytes("caf\xe9".encode("latin-1"))
    rules = load_rules(workspace)
    assert rules.loaded == [{"path": "AGENTS.md", "bytes": 10}] and "## AGENTS.md\nUse tabs." in rules.text
    assert rules.problems == [".lsp-agent/rules.md not loaded: not UTF-8 text; save it as UTF-8"]
    (workspace / "AGENTS.md").write_text("x" * (MAX_RULES_BYTES + 1))
    (workspace / ".lsp-agent" / "rules.md").unlink()
    os.mkfifo(workspace / ".lsp-agent" / "rules.md")
    rules = load_rules(workspace)
    assert rules.text == "" and rules.loaded == []
    assert rules.problems[0].startswith("AGENTS.md not loaded: 32.0 KB is over the 32.0 KB limit")
    assert rules.problems[1] == ".lsp-agent/rules.md not loaded: not a regular file"


def test_rules_that_are_secret_or_escape_the_workspace_are_not_loaded(workspace, tmp_path):
    (tmp_path / "elsewhere.md").write_text("outside rules\n")
    os.symlink(tmp_path / "elsewhere.md", workspace / "AGENTS.md")
    settings = type("S", (), {"secret_files": [".lsp-agent/rules.md"], "api_key": None})()
    (workspace / ".lsp-agent").mkdir()
    (workspace / ".lsp-agent" / "rules.md").write_text("hidden\n")
    rules = load_rules(workspace, settings)
    assert rules.text == ""
    assert rules.problems == [
        "AGENTS.md not loaded: AGENTS.md: a symlink on this path leads outside the workspace root; refused",
        ".lsp-agent/rules.md not loaded: it matches secretFiles, so its contents are never shown to the model",
    ]
