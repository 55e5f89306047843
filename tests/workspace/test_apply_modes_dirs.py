"""Apply gives new files the mode a user's new file gets and keeps a changed file's mode; undo removes the
directories the apply created once they are empty, and nothing else."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.workspace.applied import ApplyRecord, apply_with_record, undo_apply, workspace_dir
from lsp_agent.workspace.proposal import FileChange, Proposal, current_umask


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_027():
    """A umask other than the usual 022, so the test sees it honoured (restored afterwards)."""
    old = os.umask(0o027)
    yield 0o027
    os.umask(old)


def test_a_created_file_gets_0666_less_the_umask_not_the_temp_files_0600(tmp_path: Path, umask_027) -> None:
    assert current_umask() == 0o027
    errors, _ = apply_with_record(tmp_path, Proposal([FileChange("new.py", "create", None, "X = 1\n")]), "m1")
    assert errors == []
    assert mode(tmp_path / "new.py") == 0o640  # 0666 & ~0027
    touched = tmp_path / "touched"
    touched.touch()  # what the user's own new file gets under the same umask
    assert mode(tmp_path / "new.py") == mode(touched)


def test_a_changed_file_keeps_its_mode_and_executable_bit(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho a\n")
    script.chmod(0o751)
    private = tmp_path / "private.txt"
    private.write_text("one\n")
    private.chmod(0o600)
    proposal = Proposal(
        [
            FileChange("run.sh", "modify", "#!/bin/sh\necho a\n", "#!/bin/sh\necho b\n"),
            FileChange("private.txt", "modify", "one\n", "two\n"),
        ]
    )
    errors, record = apply_with_record(tmp_path, proposal, "m2")
    assert errors == [] and record is not None
    assert script.read_text().endswith("echo b\n") and mode(script) == 0o751
    assert private.read_text() == "two\n" and mode(private) == 0o600
    assert undo_apply(tmp_path, record) == []
    assert mode(script) == 0o751 and mode(private) == 0o600


def test_the_undo_record_itself_stays_private(tmp_path: Path) -> None:
    apply_with_record(tmp_path, Proposal([FileChange("a.txt", "create", None, "a\n")]), "m3")
    assert mode(workspace_dir(tmp_path) / "last-apply.json") == 0o600


def test_undo_removes_the_directories_the_apply_created_and_now_empty(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.py").write_text("K = 1\n")
    proposal = Proposal(
        [
            FileChange("src/pkg/deep/mod.py", "create", None, "M = 1\n"),
            FileChange("docs/guide/intro.md", "create", None, "# intro\n"),
            FileChange("src/top.py", "create", None, "T = 1\n"),
        ]
    )
    errors, record = apply_with_record(tmp_path, proposal, "d1")
    assert errors == [] and record is not None
    assert sorted(record.created_dirs) == ["docs", "docs/guide", "src/pkg", "src/pkg/deep"]
    saved = json.loads((workspace_dir(tmp_path) / "last-apply.json").read_text())
    assert sorted(saved["createdDirs"]) == sorted(record.created_dirs)

    assert undo_apply(tmp_path, ApplyRecord.load(tmp_path)) == []
    assert not (tmp_path / "docs").exists() and not (tmp_path / "src" / "pkg").exists()
    assert (tmp_path / "src").is_dir() and (tmp_path / "src" / "keep.py").read_text() == "K = 1\n"  # existed
    assert not (tmp_path / "src" / "top.py").exists()


def test_undo_keeps_a_created_directory_that_now_holds_the_users_files(tmp_path: Path) -> None:
    proposal = Proposal([FileChange("notes/day/one.md", "create", None, "1\n")])
    _, record = apply_with_record(tmp_path, proposal, "d2")
    mine = tmp_path / "notes" / "mine.md"
    mine.write_text("the user's own note\n")  # added after the apply, next to the created directory

    assert undo_apply(tmp_path, record) == []
    assert not (tmp_path / "notes" / "day").exists()  # made by the apply and empty: removed
    assert mine.read_text() == "the user's own note\n"  # its directory stays, with the user's file


def test_a_refused_undo_removes_no_directory(tmp_path: Path) -> None:
    _, record = apply_with_record(tmp_path, Proposal([FileChange("a/b/c.txt", "create", None, "c\n")]), "d3")
    (tmp_path / "a" / "b" / "c.txt").write_text("changed by the user\n")
    problems = undo_apply(tmp_path, record)
    assert problems and "changed since the apply" in problems[0]
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "changed by the user\n"


def test_an_old_record_without_created_dirs_still_undoes(tmp_path: Path) -> None:
    _, record = apply_with_record(tmp_path, Proposal([FileChange("x/y.txt", "create", None, "y\n")]), "d4")
    path = workspace_dir(tmp_path) / "last-apply.json"
    data = json.loads(path.read_text())
    del data["createdDirs"]  # written by an earlier lsp-agent
    path.write_text(json.dumps(data))
    assert undo_apply(tmp_path, ApplyRecord.load(tmp_path)) == []
    assert not (tmp_path / "x" / "y.txt").exists() and (tmp_path / "x").is_dir()  # nothing known to remove
