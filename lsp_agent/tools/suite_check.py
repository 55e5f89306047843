"""The whole suite once the named tests pass (tested edits): an edit that makes them pass but breaks tests that pass
without the proposal is not a fix.

The suite runs once with the proposal. Only when something fails does it run on the workspace as it is (the
proposal left out), once per run; tests failing there too do not count against an edit. A suite that cannot be run
or read (a timeout, no counts) does not block the edit. When the proposal fixes failing tests beyond the named ones
but others still fail, those may share the bug: `unfinished` counts them (line repairs look on for a fuller fix),
and a run that ends with such a partial fix ends with its checks failed (`still_failing` names them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_agent.tools.test_runs import TestReport, run_pytest
from lsp_agent.workspace.overlay import Overlay

if TYPE_CHECKING:
    from lsp_agent.tools.registry import ToolContext
    from lsp_agent.tools.tested_edit import EditTesting

MAX_LISTED = 3  # broken tests named in a message


def broken_elsewhere(ctx: ToolContext, testing: EditTesting) -> tuple[list[str], TestReport]:
    """(the tests that fail with the proposal and pass without it, the whole suite's report)."""
    report = run_pytest(ctx, [])
    if report.passed or report.problem or not report.failed:
        return [], report
    if testing.suite_before is None:
        testing.suite_before = run_pytest(ctx, [], overlay=Overlay(ctx.root))
    if testing.suite_before.problem:
        return [], report
    return [t for t in report.failed if t not in testing.suite_before.failed], report


def unfinished(suite: TestReport | None, testing: EditTesting) -> int:
    """Tests the whole suite still fails with a passing proposal that also fixed failing tests the task does not
    name (a sign the rest share the bug); 0 when it fixed none of those (they fail for reasons of their own)."""
    before = testing.suite_before
    if suite is None or suite.passed or suite.problem or before is None or before.problem:
        return 0
    named = testing.baseline.failing if testing.baseline is not None else frozenset()
    fixed_elsewhere = set(before.failed) - set(suite.failed) - named
    return len(suite.failed) if fixed_elsewhere else 0


def still_failing(suite: TestReport) -> str:
    """The report a partial fix ends the run with (its checks failed): the whole suite's counts and the tests that
    still fail."""
    return f"{suite.short()}; still failing: {listed(suite.failed)}"


def listed(tests: list[str]) -> str:
    """Up to MAX_LISTED test ids, and how many more."""
    more = len(tests) - MAX_LISTED
    return ", ".join(tests[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def broken_message(key: str, broken: list[str], suite: TestReport) -> str:
    """Why an edit that passes the named tests was undone."""
    return (
        f"that edit makes the tests the task names pass, but breaks tests elsewhere that pass without it "
        f"({listed(broken)}), so it was undone ({key} is as before; the whole suite with it: {suite.short()}). "
        "Make a different edit."
    )
