"""Tested edits (small profile): each edit of a Python file runs the task's named tests against the proposal at once.

An agentless-style repair loop inside the tool loop: the observation of an edit is the test result.
- The tests pass: the edit stays and the run may finish with this proposal (`verified`), unless it breaks tests
  elsewhere in the suite that pass without it (suite_check.py): then it is undone like any edit that does not fix it.
  When the whole suite still fails tests that may share the bug (a partial fix), a run ending with it ends with its
  checks failed (`kept`).
- Fewer tests fail, more pass and none fails that passed before: the edit stays, with the report (progress on a fix
  that needs several edits).
- An edit that leaves the file unparsable is undone at once, without running the tests; an edit of the test files
  the task names is refused (tested_edit_scope.py), unless the task asks for test changes.
- Otherwise the edit is undone, so every attempt starts from code the model has already seen, and the report comes
  back as a failed call; the very same edit proposed again is refused without running the tests.
The test run is code execution: it goes through the permission gate as `run_tests`; refused, the edit stays
untested and says so. An edit without a usable path goes to the one candidate file (the files the task names,
then those changed) that contains its old text.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.index.rows import text_hash
from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry
from lsp_agent.tools.suite_check import broken_elsewhere, broken_message, listed, still_failing, unfinished
from lsp_agent.tools.syntax_check import introduced_errors
from lsp_agent.tools.test_runs import TestReport, run_pytest
from lsp_agent.tools.tested_edit_scope import named_test_file, test_edit_refusal
from lsp_agent.tools.verify import PermissionCheck, fingerprint

EDIT_TOOL = "edit_file"
_FAILED = re.compile(r"(\d+) (?:failed|errors?)\b")
_PASSED = re.compile(r"(\d+) passed\b")


@dataclass(frozen=True)
class Standing:
    """How a test run stood: failing (or erroring) and passing counts, and the failing tests' ids."""

    failed: int
    passed: int
    failing: frozenset[str]

    def better_than(self, other: Standing) -> bool:
        """Fewer failures, more passes and no test failing that did not fail before: progress worth keeping."""
        return self.failed < other.failed and self.passed > other.passed and self.failing <= other.failing


def standing(report: TestReport | None) -> Standing | None:
    """The report's standing; None when it has no counts (the run itself failed)."""
    if report is None or report.problem or not report.counts:
        return None
    failed = sum(int(n) for n in _FAILED.findall(report.counts))
    passed = sum(int(n) for n in _PASSED.findall(report.counts))
    return Standing(failed, passed, frozenset(report.failed))


@dataclass
class EditTesting:
    """What tested edits run, and what they saw: the baseline, the attempts that failed, the passing proposal."""

    targets: list[str]
    allowed: PermissionCheck
    candidates: list[str] = field(default_factory=list)
    baseline: Standing | None = None  # how the tests stood before any edit (from the up-front run)
    # an edit, and the file text it left -> the test result that undid it
    tried: dict[str, str] = field(default_factory=dict)
    passed: str | None = None  # fingerprint of the proposal the tests passed with
    passed_report: str = ""
    passed_suite: str = ""  # the whole suite with that proposal, when it is more than the named tests
    suite_failing: int = 0  # tests the whole suite still fails with that proposal that may share the bug
    # fingerprint of a proposal whose tests still fail (kept as progress, or a partial fix), and its test result:
    # a run ending with it ends with its checks failed
    kept: tuple[str, str] | None = None
    failures: int = 0  # edits that failed, were refused or were undone
    untested: int = 0  # edits kept without a test run (running the tests was not permitted)
    on_failure: Callable[[int], None] | None = None  # told how many edits failed so far
    tests_editable: bool = False  # the task asks for test changes: an edit of its named tests may be the fix
    simplify: bool = (
        True  # a passing one-line edit gives way to a simpler passing version (agent/repair/line_simpler.py)
    )
    note: str = ""  # what the summary adds about the passing proposal (other versions that pass)
    alternatives: dict[str, Any] = field(default_factory=dict)  # their `context` event (path, line, versions)
    check_suite: bool = True  # once the named tests pass, the whole suite runs too (suite_check.py)
    suite_before: TestReport | None = None  # the whole suite without the proposal, run when first needed

    def failed(self) -> None:
        """Count a failed edit and tell the listener (which samples the next reply differently)."""
        self.failures += 1
        if self.on_failure is not None:
            self.on_failure(self.failures)

    def verified(self, ctx: ToolContext) -> bool:
        """True while the proposal is the one the named tests passed with."""
        return self.passed is not None and self.passed == fingerprint(ctx)


def resolve_path(ctx: ToolContext, path: str, old_text: str, candidates: list[str]) -> str:
    """`path` when it is a file; else the one candidate file containing old_text's first line (else `path`)."""
    if path and ctx.overlay.is_file(ctx.overlay.normalize(path)):
        return path
    first = next((line.strip() for line in old_text.splitlines() if line.strip()), "")
    if not first:
        return path
    pool = list(dict.fromkeys([*candidates, *ctx.overlay.changed_paths()]))
    holding = [p for p in pool if ctx.overlay.is_file(p) and first in ctx.overlay.read_text(p)]
    return holding[0] if len(holding) == 1 else path


def test_line_note(ctx: ToolContext, old_text: str, targets: list[str]) -> str | None:
    """When old_text's first line is a line of the task's tests, a note saying so (the model copied the failing
    assertion from the report), else None."""
    first = next((line.strip() for line in old_text.splitlines() if line.strip()), "")
    for target in targets:
        path = target.split("::", 1)[0]
        if first and ctx.overlay.is_file(path):
            lines = ctx.overlay.read_text(path).splitlines()
            found = [n for n, line in enumerate(lines, 1) if first in line]
            if found:
                return (
                    f"old_text is line {found[0]} of the test {path}, not code of the project. Do not change "
                    "the tests: edit the code that the test calls, as shown in the first message."
                )
    return None


def _signature(path: str, old_text: str, new_text: str) -> str:
    """An edit compared without whitespace differences."""
    return "\0".join([path, " ".join(old_text.split()), " ".join(new_text.split())])


def _tested(tool: Tool, testing: EditTesting) -> Tool:
    """edit_file followed by the named tests; undone when it does not help."""
    original = tool.function

    async def run(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
        path = resolve_path(ctx, path, old_text, testing.candidates)
        key = ctx.overlay.normalize(path) if path else path
        signature = _signature(key, old_text, new_text)
        if signature in testing.tried:
            _refuse_again(testing, testing.tried[signature])
        if not testing.tests_editable and named_test_file(key, testing.targets):
            testing.failed()
            raise ToolError(test_edit_refusal(key))
        before = ctx.overlay.read_text(key) if key and ctx.overlay.is_file(key) else None
        try:
            output = await _call(original, ctx, path=path, old_text=old_text, new_text=new_text)
        except ToolError as error:
            testing.failed()
            note = test_line_note(ctx, old_text, testing.targets) if "not found" in str(error) else None
            raise ToolError(note) if note else error from None
        if (problem := _syntax_problem(ctx, key, before)) is not None:
            if before is not None:
                ctx.overlay.write_text(key, before)
            testing.failed()
            raise ToolError(
                f"that edit leaves {key} unparsable ({problem}), so it was undone. Make a different edit."
            )
        if not testing.targets or not key.endswith(".py"):
            return output
        left = _left(key, ctx)
        if left in testing.tried and before is not None:  # the same change, written with other context lines
            ctx.overlay.write_text(key, before)
            _refuse_again(testing, testing.tried[left])
        if not await testing.allowed("run_tests", "exec", {"args": list(testing.targets)}):
            testing.untested += 1
            return f"{output}\nThe tests were not run: running them was not permitted."
        report = await asyncio.to_thread(run_pytest, ctx, list(testing.targets))
        if report.passed:
            broken, suite = await _whole_suite(ctx, testing)
            if not broken:
                return f"{output}\n{_passing(ctx, testing, report, suite)}"
            _undo(ctx, testing, key, before, (signature, left), f"the whole suite: {suite.short()}")
            raise ToolError(broken_message(key, broken, suite))
        now, baseline = standing(report), testing.baseline
        if now is not None and baseline is not None and now.better_than(baseline):
            testing.baseline, testing.kept = now, (fingerprint(ctx), report.short())
            return (
                f"{output}\nFewer tests fail now ({baseline.failed} before, {now.failed} now); the edit is kept.\n"
                f"{report.details()}"
            )
        _undo(ctx, testing, key, before, (signature, left), report.short())
        raise ToolError(_undone(key, report, baseline))

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def _passing(ctx: ToolContext, testing: EditTesting, report: TestReport, suite: TestReport | None) -> str:
    """Record the proposal the named tests pass with (a partial fix, its checks failed, when the whole suite still
    fails tests that may share the bug); what the edit's observation says of it."""
    wider = suite is not None and suite.counts != report.counts  # else the named tests are all
    testing.passed, testing.passed_report = fingerprint(ctx), report.short()
    testing.passed_suite = f"The whole suite: {suite.short()}." if wider else ""
    testing.suite_failing = unfinished(suite, testing)
    if testing.suite_failing and suite is not None:  # a partial fix: never a plain success
        testing.kept = (testing.passed, still_failing(suite))
    return f"The tests the task names pass now: {report.short()}. {testing.passed_suite}".rstrip()


async def _whole_suite(ctx: ToolContext, testing: EditTesting) -> tuple[list[str], TestReport | None]:
    """(tests elsewhere the proposal breaks, the whole suite's report); none when the check is off or not
    permitted."""
    if not testing.check_suite or not await testing.allowed("run_tests", "exec", {"args": []}):
        return [], None
    return await asyncio.to_thread(broken_elsewhere, ctx, testing)


def _undo(
    ctx: ToolContext, testing: EditTesting, key: str, before: str | None, keys: tuple[str, str], result: str
) -> None:
    """Put the file back, remember the edit's result under its keys (it is refused if made again), count it."""
    if before is not None:
        ctx.overlay.write_text(key, before)
    for tried in keys:
        testing.tried[tried] = result
    testing.failed()


def _refuse_again(testing: EditTesting, result: str) -> None:
    """Count and refuse an edit tried before (its test result is known)."""
    testing.failed()
    raise ToolError(
        f"you made this same edit before and it did not fix the tests ({result}); it was undone. "
        "Make a different change."
    )


def _left(key: str, ctx: ToolContext) -> str:
    """What an edit left: the file's path and a digest of its new text (an edit's key however it was written)."""
    return "\0".join([key, text_hash(ctx.overlay.read_text(key))])


def _undone(key: str, report: TestReport, baseline: Standing | None) -> str:
    """Why an edit was undone: its test report; when its first failure is a test that passed before the edit,
    only the names of the tests it broke (a small model otherwise sets out to fix the failure its own edit caused)."""
    broken = [t for t in report.failed if baseline is not None and t not in baseline.failing]
    if report.failed and report.failed[0] in broken:
        return (
            f"that edit did not fix it and broke tests that passed before ({listed(broken)}), so it was undone "
            f"({key} is as before; with it: {report.short()}). The failure to fix is still the one in the first message: "
            "make a different edit."
        )
    return (
        f"that edit did not fix it, so it was undone ({key} is as before). With it:\n{report.details()}\n"
        "Read the failing test's assertion again and make a different edit."
    )


def _syntax_problem(ctx: ToolContext, key: str, before: str | None) -> str | None:
    """The parse errors the edit brought into the file (Python compiled, every other language the index parses
    with tree-sitter: ERROR and MISSING nodes it did not have before), or None."""
    if not key or not ctx.overlay.is_file(key):
        return None
    problems = introduced_errors(key, before, ctx.overlay.read_text(key))
    return "; ".join(f"line {problem.removeprefix(f'{key}:')}" for problem in problems) or None


async def _call(function: Any, ctx: ToolContext, **arguments: Any) -> str:
    """Run a tool function, sync (in a worker thread) or async."""
    if inspect.iscoroutinefunction(function):
        return await function(ctx, **arguments)
    return await asyncio.to_thread(function, ctx, **arguments)


def make_edits_tested(registry: ToolRegistry, testing: EditTesting) -> bool:
    """Replace edit_file with the tested version; False when there is no edit_file."""
    tool = registry.get(EDIT_TOOL)
    if tool is None:
        return False
    registry.register(_tested(tool, testing), replace=True)
    return True
