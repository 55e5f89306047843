"""The apply/undo records: exact restores (deleted files come back with their mode), all-or-nothing refusals, and
damaged records that say what to do."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lsp_agent.workspace.applied import (
    ApplyRecord,
    LastProposal,
    RecordError,
    apply_with_record,
    undo_apply,
    workspace_dir,
)
from lsp_agent.workspace.proposal import FileChange, Proposal


def test_undo_brings_a_deleted_file_back_with_its_mode_and_removes_a_created_one(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hi\r\n")
    script.chmod(0o755)
    proposal = Proposal(
        [
            FileChange("run.sh", "delete", script.read_bytes().decode(), None),
            FileChange("new/notes.md", "create", None, "notes\n"),
        ]
    )
    errors, record = apply_with_record(tmp_path, proposal, "r1")
    assert errors == [] and record is not None
    assert not script.exists() and (tmp_path / "new" / "notes.md").read_text() == "notes\n"
    assert ApplyRecord.load(tmp_path).run_id == "r1"

    assert undo_apply(tmp_path, ApplyRecord.load(tmp_path)) == []
    assert script.read_bytes() == b"#!/bin/sh\necho hi\r\n"  # exact, CRLF kept
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert not (tmp_path / "new" / "notes.md").exists()


def test_undo_refuses_a_file_created_again_since_the_apply_deleted_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "b.py").write_text("B = 1\n")
    proposal = Proposal(
        [FileChange("a.py", "delete", "A = 1\n", None), FileChange("b.py", "modify", "B = 1\n", "B = 2\n")]
    )
    _, record = apply_with_record(tmp_path, proposal, "r2")
    (tmp_path / "a.py").write_text("mine\n")
    problems = undo_apply(tmp_path, record)
    assert problems[0] == "a.py: was created again since the apply (the apply had deleted it)"
    assert "nothing was changed" in problems[-1]
    assert (tmp_path / "b.py").read_text() == "B = 2\n" and (tmp_path / "a.py").read_text() == "mine\n"


def test_a_damaged_record_says_what_to_do(tmp_path: Path) -> None:
    folder = workspace_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "last-proposal.json").write_text("{broken")
    with pytest.raises(RecordError, match="unreadable .* delete it and run again"):
        LastProposal.load(tmp_path)
    (folder / "last-apply.json").write_text('{"version": 99}')
    with pytest.raises(RecordError, match="unknown format"):
        ApplyRecord.load(tmp_path)


def test_records_of_two_workspaces_with_the_same_name_stay_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert workspace_dir(one) != workspace_dir(two)
    LastProposal(str(one), "r1", "task", "complete", Proposal([])).save()
    assert LastProposal.load(two) is None and LastProposal.load(one).run_id == "r1"
