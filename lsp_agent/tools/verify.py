"""The agent tests its own proposal: a task_complete that first runs the relevant tests in the sandbox.

Only a run that proposes changes is tested: the tests the task names, else the changed modules' test_*.py.

When the tests fail, the call fails with the condensed report, so the loop goes on and the model reads what broke.
Calling task_complete again with the proposal unchanged finishes the run, saying the tests still fail. When the
named tests failed up front, a finish with nothing changed is refused once with that reason. The test
run is code execution: it goes through the permission gate as `run_tests` (never silently), and a refusal
finishes the run without testing, saying so. The result is part of the summary, hence of the proposal.
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
from lsp_agent.tools.test_runs import is_test_path, named_test_files, run_pytest
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
    tests_editable: bool = (
        False  # the task asks for test changes (else changes to its named tests are undone)
    )

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
        "test_" + path.rsplit("/", 1)[-1]
        for path in ctx.overlay.changed_paths()
        if path.endswith(".py") and not is_test_path(path)
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
    """A hash of the proposal's current content (which files changed and how)."""
    digest = hashlib.sha256()
    for path in sorted(ctx.overlay.changed_paths()):
        digest.update(path.encode())
        text = ctx.overlay.read_text(path) if ctx.overlay.is_file(path) else "\0deleted"
        digest.update(text.encode("utf-8", "replace"))
    return digest.hexdigest()


def install_verified_finish(registry: ToolRegistry, verification: Verification) -> bool:
    """Replace task_complete with one that runs `verification`'s tests first; False when there is none."""
    original = registry.get(FINISH_TOOL)
    if original is None:
        return False

    async def finish(ctx: ToolContext, summary: str) -> str:
        """task_complete, after the tests pass (or were refused, or still fail unchanged)."""
        text = summary.strip() or "Task complete."
        if not ctx.overlay.changed_paths():
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
        targets = verification.targets or tests_for_changes(ctx)
        if not targets:
            return text
        if not await verification.allowed("run_tests", "exec", {"args": list(targets)}):
            return f"{text}\n\nTests not run: running them was not permitted."
        report = await asyncio.to_thread(run_pytest, ctx, list(targets))
        if report.passed:
            verification.last_failed = None
            return f"{text}\n\nTests pass: {report.short()}."
        state = fingerprint(ctx)
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
