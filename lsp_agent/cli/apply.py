"""`lsp-agent apply` and `lsp-agent undo`: apply the proposal `ask` showed last, or revert the last apply.

`ask` remembers the proposal it printed (remember_proposal); `apply` writes exactly that proposal without running
the model again, refusing files changed since the agent read them; `undo` restores the text every file had before
the last apply, refusing files changed since. Each ends with one summary line; a refusal exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from lsp_agent.workspace.applied import (
    AppliedFile,
    ApplyRecord,
    LastProposal,
    RecordError,
    apply_with_record,
    now_iso,
    undo_apply,
)
from lsp_agent.workspace.apply_journal import record_apply

if TYPE_CHECKING:
    from lsp_agent.agent.loop.run import RunResult
    from lsp_agent.workspace.proposal import Proposal


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`apply` and `undo`."""
    p = commands.add_parser("apply", help="apply the proposal the last `ask` showed (no new model run)")
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.set_defaults(handler=run_apply)
    p = commands.add_parser(
        "undo", help="revert the last apply (`ask --apply` or `apply`) if no file changed since"
    )
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.set_defaults(handler=run_undo)


def remember_proposal(root: Path, run_id: str, task: str, result: RunResult, out: TextIO) -> None:
    """Save the proposal a run showed as the workspace's last one (for `lsp-agent apply`)."""
    if result.proposal is None:
        return
    try:
        LastProposal(str(root), run_id, task, result.stop_reason, result.proposal).save()
    except OSError as exc:
        print(f"warning: could not remember the proposal for `lsp-agent apply`: {exc}", file=out)


def apply_proposal(root: Path, proposal: Proposal, run_id: str, out: TextIO) -> tuple[bool, str]:
    """Apply all or nothing and record it for undo; returns (applied, the summary's words for the outcome)."""
    try:
        errors, record = apply_with_record(root, proposal, run_id)
    except OSError as exc:
        errors, record = [f"the undo record could not be saved: {exc}"], None
    try:
        if record is not None:  # every apply is journaled, for `lsp-agent rewind`
            record_apply(root, run_id, record.files, record.created_dirs)
    except OSError as exc:
        print(f"warning: the apply could not be journaled for `lsp-agent rewind`: {exc}", file=sys.stderr)
    for error in errors:
        print(f"not applied: {error}", file=out)
    if errors:
        written = len(record.files) if record else 0
        return False, f"not applied: {len(errors)} problem(s), {written} file(s) written"
    _mark_applied(root, run_id)
    return True, f"applied {len(proposal.changes)} file(s) (undo with `lsp-agent undo`)"


def _mark_applied(root: Path, run_id: str) -> None:
    """Note on the last proposal that it was applied (a second `apply` then says so)."""
    try:
        last = LastProposal.load(root)
        if last is not None and last.run_id == run_id:
            last.applied_at = now_iso()
            last.save()
    except (RecordError, OSError):
        pass


def _root(args: argparse.Namespace) -> Path | None:
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    if not root.is_dir():
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return None
    return root


def run_apply(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent apply`: write the last proposal of the workspace; 1 when refused or missing."""
    out = sys.stdout
    root = _root(args)
    if root is None:
        return 2
    try:
        last = LastProposal.load(root)
    except RecordError as exc:
        print(f"not applied: {exc}", file=out)
        return 1
    if last is None or last.proposal.is_empty():
        print(f'not applied: no proposal to apply in {root}; run `lsp-agent ask "..."` first', file=out)
        return 1
    if last.applied_at:
        print(
            f"not applied: the proposal of run {last.run_id} was applied already ({last.applied_at}); "
            "`lsp-agent undo` reverts it",
            file=out,
        )
        return 1
    print(f"run {last.run_id} ({last.stop_reason}): {last.task}", file=out)
    print(last.proposal.stat_text(), file=out)
    if last.stop_reason not in ("complete", "no_tool_call"):
        print(f"note: that run ended {last.stop_reason}; applying the changes it proposed as shown", file=out)
    for check in last.proposal.checks_failed:
        print(f"note: this proposal fails the run's own checks: {check}; applying it as asked", file=out)
    applied, words = apply_proposal(root, last.proposal, last.run_id, out)
    print(f"{words} | run {last.run_id} | {root}", file=out)
    return 0 if applied else 1


def run_undo(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent undo`: restore the text every file had before the last apply; 1 when refused."""
    out = sys.stdout
    root = _root(args)
    if root is None:
        return 2
    try:
        record = ApplyRecord.load(root)
    except RecordError as exc:
        print(f"not undone: {exc}", file=out)
        return 1
    if record is None:
        print(f"not undone: nothing applied in {root} to undo (or it was undone already)", file=out)
        return 1
    problems = undo_apply(root, record)
    for problem in problems:
        print(f"not undone: {problem}", file=out)
    if problems:
        print(
            f"not undone: {len(problems) - 1} file(s) changed since the apply | run {record.run_id}", file=out
        )
        return 1
    ApplyRecord.forget(root)
    _journal_undo(root, record)
    _mark_unapplied(root, record.run_id)
    for item in record.files:
        what = "removed" if item.before is None else "restored"
        print(f"{what} {item.path}", file=out)
    for rel in sorted(record.created_dirs, reverse=True):
        if not (root / rel).exists():
            print(f"removed {rel}/ (created by the apply, empty now)", file=out)
    print(f"undone: {len(record.files)} file(s) restored | run {record.run_id} | {root}", file=out)
    return 0


def _journal_undo(root: Path, record: ApplyRecord) -> None:
    """An undo is journaled as the apply reversed (a later rewind then finds the files as the undo left them)."""
    back = [AppliedFile(f.path, f.after, f.before, f.mode) for f in record.files]
    try:
        record_apply(root, record.run_id, back)
    except OSError as exc:
        print(f"warning: the undo could not be journaled for `lsp-agent rewind`: {exc}", file=sys.stderr)


def _mark_unapplied(root: Path, run_id: str) -> None:
    """After an undo, the last proposal can be applied again."""
    try:
        last = LastProposal.load(root)
        if last is not None and last.run_id == run_id:
            last.applied_at = None
            last.save()
    except (RecordError, OSError):
        pass
