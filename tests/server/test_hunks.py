"""Hunks and rebasing: minimal line hunks, clean rebases, refusals, LSP line breaks, and the WorkspaceEdit shape."""

from __future__ import annotations

import random
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from lsp_agent.server.edits import DocumentState, EditSupport, build_edit, file_proposals
from lsp_agent.workspace.hunks import apply_hunks, compute_hunks, split_lines
from lsp_agent.workspace.proposal import FileChange, Proposal
from lsp_agent.workspace.rebase import Rebaser, rebase_hunks

BASE = "".join(f"line {i}\n" for i in range(20))


def test_split_lines_counts_only_lsp_line_breaks():
    assert split_lines("a\r\nb\rc\x0cd\u2028e\n") == ("a\r\n", "b\r", "c\x0cd\u2028e\n")
    assert split_lines("x") == ("x",) and split_lines("") == ()


def test_hunks_are_minimal_and_reproduce_the_new_text():
    new = BASE.replace("line 3\n", "line three\n").replace("line 15\n", "") + "tail\n"
    hunks = compute_hunks(BASE, new)
    assert [(h.start, h.end) for h in hunks] == [(3, 4), (15, 16), (20, 20)]
    assert apply_hunks(BASE, hunks) == new


def test_rebase_shifts_hunks_past_unrelated_user_edits():
    new = BASE.replace("line 10\n", "line ten\n")
    current = "# header\n" + BASE.replace("line 1\n", "line one\n")
    rebased, refused = rebase_hunks("f.py", BASE, current, compute_hunks(BASE, new))
    assert refused == []
    assert apply_hunks(current, rebased) == current.replace("line 10\n", "line ten\n")


def test_rebase_refuses_hunks_on_or_next_to_edited_lines():
    new = BASE.replace("line 5\n", "line five\n").replace("line 12\n", "line twelve\n")
    current = BASE.replace("line 6\n", "user was here\n")  # right below the first hunk
    rebased, refused = rebase_hunks("f.py", BASE, current, compute_hunks(BASE, new))
    assert [r.hunk.start for r in refused] == [5]
    assert "line 6" in refused[0].message() and "f.py" in refused[0].message()
    assert apply_hunks(current, rebased) == current.replace("line 12\n", "line twelve\n")


def test_rebase_refuses_an_append_when_the_user_appended_too():
    new = BASE + "agent tail\n"
    rebased, refused = rebase_hunks("f.py", BASE, BASE + "user tail\n", compute_hunks(BASE, new))
    assert rebased == [] and len(refused) == 1


def test_rebase_on_a_large_file_with_edits_at_both_ends():
    """5,000 lines full of repeated blank lines: every untouched line still maps, so the hunks move cleanly."""
    base = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(1250))
    new = base.replace("return x + 7\n", "return x - 7\n").replace("return x + 1200\n", "return x - 1200\n")
    hunks = compute_hunks(base, new)
    assert [(h.start, h.end) for h in hunks] == [(29, 30), (4801, 4802)]
    current = "import os\n" + base.replace("def f600(x)", "def f600(x, y)") + "# end\n"
    rebased, refused = rebase_hunks("big.py", base, current, hunks)
    assert refused == [] and [h.start for h in rebased] == [30, 4802]
    assert (
        apply_hunks(current, rebased)
        == "import os\n" + new.replace("def f600(x)", "def f600(x, y)") + "# end\n"
    )
    conflict = base.replace("return x + 1200\n", "return x * 1200\n")
    kept, refused = rebase_hunks("big.py", base, conflict, hunks)
    assert [h.start for h in kept] == [29] and [r.hunk.start for r in refused] == [4801]


def test_workspace_edit_uses_versions_annotations_and_end_of_file_positions(tmp_path: Path):
    base = "a = 1\nb = 2"  # no trailing newline
    proposal = Proposal([FileChange("m.py", "modify", base, "a = 1\nb = 3")], "set b")
    (fp,) = file_proposals(tmp_path, proposal)
    support = EditSupport(document_changes=True, create=True, delete=True, annotations=True)
    plan = build_edit(
        [(fp, None)],
        lambda p: DocumentState(base, 7),
        support,
        PositionCodec(),
        annotation_id="x",
        label="set b",
    )
    (doc_edit,) = plan.edit.document_changes
    assert doc_edit.text_document.version == 7
    (edit,) = doc_edit.edits
    assert isinstance(edit, types.AnnotatedTextEdit) and edit.annotation_id == "x"
    assert (
        edit.range.start.line,
        edit.range.start.character,
        edit.range.end.line,
        edit.range.end.character,
    ) == (1, 0, 1, 5)
    assert plan.edit.change_annotations["x"].needs_confirmation is True


def test_a_file_created_meanwhile_is_never_overwritten(tmp_path: Path):
    proposal = Proposal([FileChange("n.py", "create", None, "N = 1\n")], "add n")
    (fp,) = file_proposals(tmp_path, proposal)
    plan = build_edit(
        [(fp, None)],
        lambda p: DocumentState("user's own n.py\n"),
        EditSupport(True, True, True, True),
        PositionCodec(),
        annotation_id="x",
        label="add n",
    )
    assert plan.edit is None and "exists now" in plan.refused[0]


def test_applying_one_hunk_keeps_its_neighbour_applicable(tmp_path: Path):
    from lsp_agent.server.proposals import PendingProposal

    new = BASE.replace("line 4\n", "line four\n").replace("line 6\n", "line six\n")  # one line apart
    pending = PendingProposal.create(
        "r1", tmp_path, Proposal([FileChange("f.py", "modify", BASE, new)], "words")
    )
    (fp,) = pending.files
    assert [h.start for h in fp.hunks] == [4, 6]
    user_text = apply_hunks(BASE, [fp.hunks[0]])  # the editor applied the first hunk's code action
    pending.drop_hunk(fp, 0)
    rebased, refused = fp.rebased(user_text)
    assert refused == [] and apply_hunks(user_text, rebased) == new


def test_rebaser_follows_keystrokes_like_a_fresh_rebase():
    """Incremental rebasing (text after text) decides like a full diff, also when an edit is undone."""
    base = "".join(f"def g{i}(x):\n    return x * {i}\n\n" for i in range(150))
    new = base.replace("x * 17\n", "x * -17\n").replace("x * 70\n", "x * -70\n").replace("x * 140\n", "")
    hunks = compute_hunks(base, new)
    rebaser = Rebaser("g.py", base, hunks)
    lines = list(split_lines(base))
    rng = random.Random(7)
    outcomes = set()
    for _ in range(120):
        i = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.5:
            lines[i] = "#" + lines[i]  # typing on a line
        elif op < 0.8:
            lines.insert(i, "\n")  # a new line
        elif len(lines) > 1:
            del lines[i]
        current = "".join(lines)
        got = rebaser.rebase(current)
        assert got == rebase_hunks("g.py", base, current, hunks)
        outcomes.add(len(got[1]))
    assert len(outcomes) > 1  # some steps refused hunks, others did not

    edited = base.replace("def g70(x):\n", "def g70(x, y):\n")  # the context line above the second hunk
    assert [r.hunk for r in rebaser.rebase(edited)[1]] == [hunks[1]]
    rebased, refused = rebaser.rebase(base.replace("x * 3\n", "x * 3  # typed\n"))  # the edit is undone
    assert refused == [] and len(rebased) == len(hunks)
