"""Running a project's tests against the proposal in the run's sandbox, and condensing pytest's report.

Used where the agent tests its own work (before finishing, and up front when a task names failing tests); the
model reads the condensed report: the counts, the failing tests and the first failure's short traceback.
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_agent.index.locate import file_kind

if TYPE_CHECKING:
    from lsp_agent.sandbox.runner import ExecResult
    from lsp_agent.tools.fault_lines import Spectra
    from lsp_agent.tools.registry import ToolContext
    from lsp_agent.workspace.overlay import Overlay

log = logging.getLogger(__name__)

PYTEST_FLAGS = ["-q", "--color=no", "-p", "no:cacheprovider", "--tb=short"]
MAX_FAILURE_CHARS = 1000
MAX_FAILED_LISTED = 3
# A path as users write it in a task: "tests/test_x.py", "src/pkg/mod.py", "test_inflection.py::test_camelize".
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.py)(?:::[\w:\[\]-]+)?")
_COUNTS = re.compile(r"(\d+) (failed|passed|error|errors|skipped|xfailed|xpassed)\b")
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.M)
_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


@dataclass
class TestReport:
    """What one test run showed: whether everything passed, the counts line, failing test ids, first failure."""

    __test__ = False  # not a pytest test class

    passed: bool
    command: str
    counts: str
    failed: list[str] = field(default_factory=list)
    first_failure: str = ""
    problem: str = ""  # the tests could not be run (no pytest, timeout): what happened
    spectra: Spectra | None = None  # per-line counts of failing and passing tests, when the run traced them

    def short(self) -> str:
        """One line for a summary: 'python -m pytest tests/test_x.py: 3 failed, 9 passed'."""
        return f"`{self.command}`: {self.problem or self.counts or ('passed' if self.passed else 'failed')}"

    def details(self) -> str:
        """The report the model reads: the counts, the failing tests and the first failure's traceback."""
        lines = [self.short()]
        if self.failed:
            listed = self.failed[:MAX_FAILED_LISTED]
            more = len(self.failed) - len(listed)
            lines.append("Failing: " + ", ".join(listed) + (f" and {more} more" if more > 0 else ""))
        if self.first_failure:
            lines.append("First failure:\n" + self.first_failure)
        return "\n".join(lines)


def named_test_files(text: str, exists: Callable[[str], bool]) -> list[str]:
    """The test files (or node ids) a task names that exist in the workspace, in order of mention."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        target = match.group(0)
        path = match.group(1)
        if file_kind(path) == "test" and _exists(exists, path) and target not in found:
            found.append(target)
    return found


def named_source_files(text: str, exists: Callable[[str], bool]) -> list[str]:
    """The non-test Python files a task names that exist in the workspace, in order of mention."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        path = match.group(1)
        if file_kind(path) != "test" and _exists(exists, path) and path not in found:
            found.append(path)
    return found


def _exists(exists: Callable[[str], bool], path: str) -> bool:
    """`exists(path)`, False for a path it refuses (a task may name `../outside.py` or a secret file)."""
    try:
        return exists(path)
    except (ValueError, OSError):  # PathError is a ValueError
        return False


def run_pytest(
    ctx: ToolContext,
    targets: list[str],
    timeout: float | None = None,
    *,
    spectra: bool = False,
    overlay: Overlay | None = None,
) -> TestReport:
    """Run pytest on `targets` in the run's sandbox (the proposal applied, or `overlay`'s) and condense its output.

    With `spectra`, the same run records per-test line coverage (fault_lines.py) when the project's environment
    has coverage.py; if the traced run gives no report, the tests run once more the plain way.
    """
    from lsp_agent.sandbox.isolation import SandboxUnavailable
    from lsp_agent.tools.exec_tools import exec_timeout, sandbox_for
    from lsp_agent.tools.fault_lines import traced_run

    sandbox = sandbox_for(ctx)
    overlay = ctx.overlay if overlay is None else overlay
    python = sandbox.python().executable
    seconds = exec_timeout(ctx, timeout)
    command = " ".join(["python -m pytest", *(shlex.quote(t) for t in targets)])
    args = [*PYTEST_FLAGS, *targets]
    try:
        if spectra:
            result, found = traced_run(sandbox, overlay, python, args, timeout=seconds, cancel=ctx.cancel)
            report = _report(result, command)
            if not report.problem or result.timed_out or result.cancelled:
                report.spectra = found
                return report
            log.info("the traced test run gave no report (%s); running the tests plainly", report.problem)
        result = sandbox.run([python, "-m", "pytest", *args], overlay, timeout=seconds, cancel=ctx.cancel)
    except SandboxUnavailable as exc:
        return TestReport(False, command, "", problem=f"could not run the tests: {exc}")
    return _report(result, command)


def _report(result: ExecResult, command: str) -> TestReport:
    """The condensed report of one pytest run, with what went wrong when it did not run to its end."""
    report = condense_pytest(result.stdout + ("\n" + result.stderr if result.stderr else ""), command)
    if result.timed_out:
        report.passed, report.problem = False, "killed at the time limit (the tests hang or are slow)"
    elif result.error:
        report.passed, report.problem = False, f"could not run the tests: {result.error}"
    elif result.exit_code != 0:
        report.passed = False
        if not report.counts and not report.failed:
            tail = result.stdout.strip().splitlines()[-3:] + result.stderr.strip().splitlines()[-3:]
            report.problem = f"pytest exited with status {result.exit_code}: " + " | ".join(tail)[-400:]
    return report


def condense_pytest(output: str, command: str) -> TestReport:
    """The counts, failing test ids and first failure section of pytest's -q --tb=short output."""
    counts = _counts_line(output)
    failed = list(dict.fromkeys(_FAILED_LINE.findall(output)))
    sections = list(_SECTION.finditer(output))
    first = ""
    if sections:
        start = sections[0].start()
        end = sections[1].start() if len(sections) > 1 else len(output)
        body = output[start:end]
        summary_at = body.find("=== short test summary")
        first = body[:summary_at] if summary_at != -1 else body
        first = _clip(first.strip(), MAX_FAILURE_CHARS)
    passed = bool(counts) and "failed" not in counts and "error" not in counts
    return TestReport(passed, command, counts, failed, first)


def _counts_line(output: str) -> str:
    """'3 failed, 9 passed' from pytest's last summary line, or ''."""
    for line in reversed(output.strip().splitlines()):
        found = _COUNTS.findall(line)
        if found:
            return ", ".join(f"{n} {word}" for n, word in found)
    return ""


def _clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, keeping its end (where the assertion is) and saying so."""
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "\n[... cut ...]\n" + text[-(limit - head) :]


def is_test_path(path: str) -> bool:
    """True for a test module by its path."""
    return file_kind(path) == "test" and path.endswith(".py")
