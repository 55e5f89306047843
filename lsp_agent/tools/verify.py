"""The agent tests its own proposal: a task_complete that first runs the relevant tests in the sandbox.

Only a run that proposes changes is tested: the tests the task names, else the changed modules' test_*.py.

When the tests fail, the call fails with the condensed report, so the loop goes on and the model reads what broke.
Calling task_complete again with the proposal unchanged finishes the run, saying the tests still fail (the run then
ends with its checks failed: `tested_now`). When the named tests failed up front, a finish with nothing changed is
refused once with that reason. The test run is code execution: it goes through the permission gate as `run_tests`
(never silently), and a refusal finishes the run without testing, saying so. The result is part of the summary,
hence of the proposal.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.tools.registry import Tool, ToolContext, ToolError
from lsp_agent.tools.test_runs import TestReport, is_test_path, named_test_files, run_pytest
from lsp_agent.tools.tested_edit_scope import undo_test_edits, undone_message

if TYPE_CHECKING:
    from lsp_agent.tools.registry import ToolRegistry

FINISH_TOOL = "task_complete"
SKIPPED_DIRS = {"node_modules", "venv", "site-packages", "__pycache__", "build", "dist"}
# (tool, permission, arguments) -> allowed?; the run's permission gate in a run
PermissionCheck = Callable[[str, str, dict[str, Any]], Awaitable[bool]]


@dataclass
class Verification:
    """What the finishing tool tests and what it saw last time."""

    targets: list[str]
    allowed: PermissionCheck
    last_failed: str | None = None  # fingerprint of the proposal whose tests failed
    failing_at_start: str = ""  # the named tests' result when they failed before any edit (run up front)
    unchanged_refusals: int = 0  # finishes with nothing changed (or answers) refused so far
    refusal_limit: int = 1  # how many such finishes are refused before one is accepted
    tests_editable: bool = False  # the task asks for test changes (else edits of its named tests are undone)
    last_report: tuple[str, bool, str] | None = None  # (fingerprint, passed, report) of the last test run
    not_permitted: str | None = None  # fingerprint of a proposal whose test run was refused (not asked again)

    def tested_now(self, ctx: ToolContext) -> tuple[bool, str] | None:
        """(passed, report) of the tests' last run at a finish when it was on the proposal as it is now, else None."""
        if self.last_report is None or self.last_report[0] != fingerprint(ctx):
            return None
        return self.last_report[1], self.last_report[2]

    def refuse_unchanged(self) -> bool:
        """Count a refusal of finishing with nothing changed (or answering) while the tests fail, if one is due."""
        if not self.failing_at_start or self.unchanged_refusals >= self.refusal_limit:
            return False
        self.unchanged_refusals += 1
        return True


def tests_for_task(task: str, ctx: ToolContext) -> list[str]:
    """The tests to run before finishing: those the task names, else none (the changed modules' own tests are
    added at finish time by `tests_for_changes`)."""
    return named_test_files(task, ctx.overlay.is_file)


def tests_for_changes(ctx: ToolContext) -> list[str]:
    """Test modules named after the Python modules the proposal changes (test_mod.py for mod.py), at most five."""
    wanted = {
        "test_" + change.path.rsplit("/", 1)[-1]
        for change in ctx.overlay.checked_changes()
        if change.path.endswith(".py") and not is_test_path(change.path)
    }
    if not wanted:
        return []
    found: list[str] = []
    for folder, dirs, files in os.walk(ctx.root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(wanted.intersection(files)):
            rel = Path(folder, name).relative_to(ctx.root).as_posix()
            if is_test_path(rel) and ctx.overlay.is_file(rel):
                found.append(rel)
    return found[:5]


def fingerprint(ctx: ToolContext) -> str:
    """A hash of the proposal's current content (which files changed and how, those already written included)."""
    digest = hashlib.sha256()
    for change in ctx.overlay.checked_changes():
        digest.update(change.path.encode())
        text = "\0deleted" if change.new_text is None else change.new_text
        digest.update(text.encode("utf-8", "replace"))
    return digest.hexdigest()


async def test_at_end(verification: Verification, ctx: ToolContext) -> str | None:
    """For a run that ends without task_complete having tested its final proposal (a plain answer after an edit):
    run the tests now, so the run's status says whether they pass. The line for the answer ("Tests pass: ...",
    "Tests fail: ...", "Tests not run: ..."), or None when there is nothing to test or they already ran on it."""
    if not ctx.overlay.checked_changes() or verification.tested_now(ctx) is not None:
        return None
    if verification.not_permitted == fingerprint(ctx):
        return None  # refused at the finish already, and said so
    report = await _run_tests(verification, ctx)
    if report is None or isinstance(report, str):
        return report
    return f"Tests {'pass' if report.passed else 'fail'}: {report.short()}."


async def _run_tests(verification: Verification, ctx: ToolContext) -> TestReport | str | None:
    """The tests' report on the proposal as it is now (recorded in `verification`); a str when running them was
    not permitted; None when there is nothing to test."""
    targets = verification.targets or tests_for_changes(ctx)
    if not targets:
        return None
    if not await verification.allowed("run_tests", "exec", {"args": list(targets)}):
        verification.not_permitted = fingerprint(ctx)
        return "Tests not run: running them was not permitted."
    report = await asyncio.to_thread(run_pytest, ctx, list(targets))
    verification.last_report = (fingerprint(ctx), report.passed, report.short())
    return report


def install_verified_finish(registry: ToolRegistry, verification: Verification) -> bool:
    """Replace task_complete with one that runs `verification`'s tests first; False when there is none."""
    original = registry.get(FINISH_TOOL)
    if original is None:
        return False

    async def finish(ctx: ToolContext, summary: str) -> str:
        """task_complete, after the tests pass (or were refused, or still fail unchanged)."""
        text = summary.strip() or "Task complete."
        if not ctx.overlay.checked_changes():
            if verification.refuse_unchanged():
                last = verification.unchanged_refusals >= verification.refusal_limit
                raise ToolError(
                    f"not finished: nothing is changed yet, and the tests the task names fail "
                    f"({verification.failing_at_start}). Make the fix first"
                    + ("; calling task_complete again finishes without a change." if last else ".")
                )
            return text  # nothing proposed, nothing to test (a question, or the task needed no change)
        if not verification.tests_editable and (undone := undo_test_edits(ctx, verification.targets)):
            raise ToolError(undone_message(undone))  # a change to the named tests is not the fix
        report = await _run_tests(verification, ctx)
        if report is None:
            return text  # nothing to test
        if isinstance(report, str):
            return f"{text}\n\n{report}"
        state = verification.last_report[0] if verification.last_report else fingerprint(ctx)
        if report.passed:
            verification.last_failed = None
            return f"{text}\n\nTests pass: {report.short()}."
        if state == verification.last_failed:
            return f"{text}\n\nTests still fail: {report.short()}."
        verification.last_failed = state
        raise ToolError(
            "not finished: the tests fail with your changes.\n"
            f"{report.details()}\n"
            "Fix the code so these tests pass, then call task_complete again. (Calling it again without a change "
            "finishes with the tests failing.)"
        )

    registry.register(
        Tool(
            FINISH_TOOL,
            original.description + " The relevant tests run first; if they fail you get the failures back.",
            original.parameters,
            finish,
            permission=original.permission,
        ),
        replace=True,
    )
    return True
