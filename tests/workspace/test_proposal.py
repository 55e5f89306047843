"""Proposal: diffs, serialisation, applying with the changed-on-disk refusal, and the syntax check."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lsp_agent.workspace.overlay import Overlay
from lsp_agent.workspace.proposal import FileChange, Proposal, check_syntax


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (ws / "old.txt").write_text("bye\n")
    (ws / "run.sh").write_text("echo hi\n")
    os.chmod(ws / "run.sh", 0o755)
    return ws


def _proposal(root: Path) -> Proposal:
    overlay = Overlay(root)
    overlay.write_text("pkg/mod.py", "def f():\n    return 2\n")
    overlay.write_text("pkg/new.py", "NEW = True\n")
    overlay.delete("old.txt")
    return overlay.to_proposal("changed f, added new, removed old")


def test_unified_diff_of_each_kind(root):
    proposal = _proposal(root)
    assert [(c.path, c.kind) for c in proposal.changes] == [
        ("old.txt", "delete"),
        ("pkg/mod.py", "modify"),
        ("pkg/new.py", "create"),
    ]
    assert proposal.unified_diff() == (
        "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+NEW = True\n"
    )
    assert proposal.stat_text() == "3 files changed (1 created, 1 deleted), +2 -2"
    assert not proposal.is_empty() and Proposal([]).is_empty()


def test_diff_marks_missing_final_newline():
    change = FileChange("a.txt", "modify", "one\ntwo", "one\nthree")
    assert change.unified_diff().endswith(
        "-two\n\\ No newline at end of file\n+three\n\\ No newline at end of file\n"
    )
    assert FileChange("e.txt", "create", None, "").unified_diff() == "--- /dev/null\n+++ b/e.txt\n"


def test_change_kinds_are_validated():
    with pytest.raises(ValueError, match="kind"):
        FileChange("a", "rename", "x", "y")
    with pytest.raises(ValueError, match="create needs"):
        FileChange("a", "create", "x", "y")
    with pytest.raises(ValueError, match="delete needs"):
        FileChange("a", "delete", "x", "y")


def test_to_dict_round_trip(root):
    proposal = _proposal(root)
    data = proposal.to_dict()
    assert data["summary"] == "changed f, added new, removed old"
    assert data["changes"][1] == {
        "path": "pkg/mod.py",
        "kind": "modify",
        "baseText": "def f():\n    return 1\n",
        "newText": "def f():\n    return 2\n",
        "diff": proposal.changes[1].unified_diff(),
    }
    assert data["diff"] == proposal.unified_diff()
    assert Proposal.from_dict(data) == proposal


def test_apply_writes_every_change(root):
    proposal = _proposal(root)
    assert proposal.apply_to_disk(root) == []
    assert (root / "pkg" / "mod.py").read_text() == "def f():\n    return 2\n"
    assert (root / "pkg" / "new.py").read_text() == "NEW = True\n"
    assert not (root / "old.txt").exists()
    assert not [p for p in (root / "pkg").iterdir() if p.name.endswith(".tmp")]


def test_apply_keeps_crlf_and_file_mode(root):
    (root / "dos.txt").write_bytes(b"a\r\nb\r\n")
    overlay = Overlay(root)
    overlay.write_text("dos.txt", overlay.read_text("dos.txt").replace("b", "c"))
    overlay.write_text("run.sh", "echo bye\n")
    assert overlay.to_proposal().apply_to_disk(root) == []
    assert (root / "dos.txt").read_bytes() == b"a\r\nc\r\n"
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755


def test_apply_refuses_a_file_changed_on_disk_and_writes_nothing(root):
    proposal = _proposal(root)
    (root / "pkg" / "mod.py").write_text("def f():\n    return 'user edit'\n")
    errors = proposal.apply_to_disk(root)
    assert (
        errors[0]
        == "pkg/mod.py: changed on disk since the agent read it; refused (re-run the task on the new text)"
    )
    assert errors[-1] == "nothing was written: 1 of 3 changes refused"
    assert (root / "pkg" / "mod.py").read_text() == "def f():\n    return 'user edit'\n"
    assert (root / "old.txt").exists() and not (root / "pkg" / "new.py").exists()


def test_partial_apply_skips_only_the_conflicting_files(root):
    proposal = _proposal(root)
    (root / "old.txt").unlink()
    (root / "pkg" / "new.py").write_text("someone else\n")
    errors = proposal.apply_to_disk(root, partial=True)
    assert errors == [
        "old.txt: was deleted on disk since the agent read it; refused",
        "pkg/new.py: was created on disk since the agent started; not overwritten",
    ]
    assert (root / "pkg" / "mod.py").read_text() == "def f():\n    return 2\n"
    assert (root / "pkg" / "new.py").read_text() == "someone else\n"


def test_apply_refuses_paths_that_escape_or_became_special(root, tmp_path):
    evil = Proposal([FileChange("../evil.txt", "create", None, "x")])
    assert "outside the workspace root" in evil.apply_to_disk(root)[0]
    assert not (tmp_path / "evil.txt").exists()
    proposal = _proposal(root)
    (root / "old.txt").unlink()
    os.mkfifo(root / "old.txt")
    errors = proposal.apply_to_disk(root)
    assert "old.txt" in errors[0] and "not a regular file" in errors[0]


def test_check_syntax_on_proposal_and_overlay(root):
    overlay = Overlay(root)
    overlay.write_text("pkg/mod.py", "def f(:\n    return 1\n")
    overlay.write_text("pkg/ok.py", "x = '\\d'\n")  # a SyntaxWarning is not an error
    overlay.write_text("pkg/stub.pyi", "def g() -> int: ...\n")
    overlay.write_text("notes.md", "def f(:\n")  # not Python
    overlay.write_text("pkg/indent.py", "if True:\nreturn\n")
    overlay.delete("old.txt")
    errors = check_syntax(overlay)
    assert errors[0].startswith("pkg/indent.py:2: expected an indented block")
    assert errors[1].startswith("pkg/mod.py:1: invalid syntax")
    assert len(errors) == 2
    assert check_syntax(overlay.to_proposal()) == errors
    assert check_syntax(Proposal([])) == []
