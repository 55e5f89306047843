"""Runs in the project's test interpreter: pytest with per-test line coverage, summed into a small JSON file.

The sandbox starts it as `python -c <this file's text> OUT BUDGET PYTEST-ARGS...` (nothing is copied into the
workspace). It needs only pytest from the project's environment: coverage.py when it is there, else its own line
tracer (`LineTracer`: `sys.monitoring` on Python 3.12+, `sys.settrace` before); when tracing fails, pytest runs as
plain `python -m pytest` would and the JSON says why. The JSON
(in $TMPDIR/OUT) holds, per measured file under the working directory and per line, how many failing and how
many passing tests ran it. Tracing stops after BUDGET seconds so a slow suite still finishes in time; the tests
traced before then still make the spectra (the JSON's `partial` says so).
Only the standard library is imported at module level: lsp_agent imports this module, and coverage is not its
dependency.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import tempfile
import threading
import time
from typing import Any

SKIPPED_DIRS = ("site-packages", ".venv", "venv", ".tox", ".nox")
# Test modules are not traced (fewer line events, less data); the ranking leaves out any test file it still gets.
TEST_FILES = ["*/test_*.py", "*/*_test.py", "*/conftest.py", "*/tests/*", "*/test/*"]


class SpectraRecorder:
    """A pytest plugin: switches coverage's context to each test and records each test's outcome."""

    def __init__(self, cov: Any, budget: float) -> None:
        self.cov = cov
        self.deadline = time.monotonic() + budget
        self.tracing = True
        self.outcomes: dict[str, str] = {}
        self.traced: set[str] = set()  # the tests whose lines were recorded
        self.budget_spent = False
        self.note = ""

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        """Before a test's setup: its lines go to its own context (until the budget is spent)."""
        if self.tracing and time.monotonic() > self.deadline:
            self.stop("tracing stopped at its time budget")
            self.budget_spent = True
        self.switch(nodeid)
        if self.tracing:
            self.traced.add(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        """After a test's teardown: lines run between tests belong to no test."""
        self.switch("")

    def switch(self, context: str) -> None:
        """Record the lines that follow under `context`; a failure stops the tracing, never the tests."""
        if not self.tracing:
            return
        try:
            self.cov.switch_context(context)
        except Exception as exc:  # noqa: BLE001 - tracing is a help, the test run must go on
            self.stop(f"switching the coverage context failed: {type(exc).__name__}: {exc}")

    def stop(self, note: str) -> None:
        """Stop tracing for the rest of the run and say why."""
        self.tracing, self.note = False, note
        try:
            self.cov.stop()
        except Exception:  # noqa: BLE001, S110 - already failing; the note says so
            pass

    def pytest_runtest_logreport(self, report: Any) -> None:
        """A test failed if any phase failed; it passed if its call passed (skips and xfails count as neither)."""
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.when == "call" and report.passed and report.nodeid not in self.outcomes:
            self.outcomes[report.nodeid] = "passed"


def line_counts(data: Any, root: str, outcomes: dict[str, str]) -> dict[str, dict[str, list[int]]]:
    """{relative path: {line: [failing tests that ran it, passing tests that ran it]}} for files under root."""
    counts: dict[str, dict[str, list[int]]] = {}
    for path in data.measured_files():
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or any(part in SKIPPED_DIRS for part in rel.split(os.sep)):
            continue
        lines: dict[str, list[int]] = {}
        for line, contexts in (data.contexts_by_lineno(path) or {}).items():
            failed = sum(1 for c in contexts if outcomes.get(c) == "failed")
            passed = sum(1 for c in contexts if outcomes.get(c) == "passed")
            if failed or passed:
                lines[str(line)] = [failed, passed]
        if lines:
            counts[rel.replace(os.sep, "/")] = lines
    return counts


def start_coverage(root: str) -> Any:
    """A started Coverage over `root` that ignores the project's own coverage settings and writes no file."""
    import coverage

    cov = coverage.Coverage(data_file=None, config_file=False, source=[root], omit=TEST_FILES)
    cov.set_option(
        "run:disable_warnings",
        ["no-data-collected", "module-not-imported", "module-not-measured", "couldnt-parse", "no-ctracer"],
    )
    cov.start()
    return cov


class LineTracer:
    """Per-test lines without coverage.py, with coverage's few methods the recorder and `line_counts` use:
    `sys.monitoring` LINE events on Python 3.12+ (each line reported once per test: events are re-armed at each
    switch), `sys.settrace` before (local tracing only in the files measured)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.context = ""
        self.lines: dict[str, dict[int, set[str]]] = {}
        self.measured: dict[str, bool] = {}  # a code object's file name -> measured?
        self.kind = "monitoring" if hasattr(sys, "monitoring") else "settrace"
        self.tool = 3  # sys.monitoring's tool id (0-2 are debugger, coverage and profiler; 3-5 are free)

    def wanted(self, filename: str) -> bool:
        """Whether lines of this file are recorded: under the root, not a test file, not an installed package."""
        found = self.measured.get(filename)
        if found is None and filename.startswith("<"):  # "<string>", "<frozen ...>": no file
            found = self.measured[filename] = False
        if found is None:
            path = os.path.abspath(filename)
            rel = os.path.relpath(path, self.root)
            found = not (
                rel.startswith("..")
                or any(part in SKIPPED_DIRS for part in rel.split(os.sep))
                or any(fnmatch.fnmatch("/" + rel.replace(os.sep, "/"), pattern) for pattern in TEST_FILES)
            )
            self.measured[filename] = found
        return found

    def record(self, filename: str, line: int) -> None:
        """One line run under the current context."""
        self.lines.setdefault(os.path.abspath(filename), {}).setdefault(line, set()).add(self.context)

    def start(self) -> None:
        """Start tracing (this thread and threads started from now on)."""
        if self.kind == "monitoring":
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            monitoring.use_tool_id(self.tool, "lsp-agent-spectra")
            monitoring.register_callback(self.tool, monitoring.events.LINE, self._on_line)
            monitoring.set_events(self.tool, monitoring.events.LINE)
        else:
            threading.settrace(self._on_call)
            sys.settrace(self._on_call)

    def _on_line(self, code: Any, line: int) -> Any:
        """sys.monitoring's LINE callback: record, then silence this line until the next test."""
        if self.wanted(code.co_filename):
            self.record(code.co_filename, line)
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]

    def _on_call(self, frame: Any, event: str, arg: Any) -> Any:
        """sys.settrace's global function: trace the lines of measured files only."""
        return self._on_event if event == "call" and self.wanted(frame.f_code.co_filename) else None

    def _on_event(self, frame: Any, event: str, arg: Any) -> Any:
        """sys.settrace's local function."""
        if event == "line":
            self.record(frame.f_code.co_filename, frame.f_lineno)
        return self._on_event

    def switch_context(self, context: str) -> None:
        """The lines that follow belong to `context` (every line is reported again)."""
        self.context = context
        if self.kind == "monitoring":
            sys.monitoring.restart_events()  # type: ignore[attr-defined]

    def stop(self) -> None:
        """Stop tracing."""
        if self.kind == "monitoring":
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            monitoring.set_events(self.tool, 0)
            monitoring.register_callback(self.tool, monitoring.events.LINE, None)
            monitoring.free_tool_id(self.tool)
        else:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]

    def get_data(self) -> LineTracer:
        """The data, read like coverage's CoverageData."""
        return self

    def measured_files(self) -> list[str]:
        """The files with recorded lines."""
        return list(self.lines)

    def contexts_by_lineno(self, path: str) -> dict[int, list[str]]:
        """{line: the contexts that ran it} of one file."""
        return {line: sorted(contexts) for line, contexts in self.lines.get(path, {}).items()}


def start_tracer(root: str) -> tuple[Any, str]:
    """(a started tracer, its kind): coverage.py when importable, else our LineTracer."""
    try:
        return start_coverage(root), "coverage"
    except ImportError:
        tracer = LineTracer(root)
        tracer.start()
        return tracer, tracer.kind


def pytest_cov_muted(pytest: Any) -> object:
    """A plugin that tells pytest-cov not to measure (a project's `--cov` options): its own Coverage would take the
    tracer over and leave ours an empty record."""

    class MutePytestCov:
        """Sets pytest-cov's `--no-cov` before pytest-cov reads its options."""

        @pytest.hookimpl(hookwrapper=True)
        def pytest_load_initial_conftests(self, early_config: Any) -> Any:
            """Around every plugin's hook, so before pytest-cov's: its options say --no-cov."""
            options = early_config.known_args_namespace
            if hasattr(options, "no_cov"):  # pytest-cov is loaded
                options.no_cov = True
            yield

    return MutePytestCov()


def write(path: str, payload: dict[str, Any]) -> None:
    """Write the JSON result (a failure to write only costs the spectra)."""
    try:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(payload, out)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    """Run pytest on argv[2:], tracing per test when coverage is importable; write argv[0]'s JSON."""
    out = os.path.join(tempfile.gettempdir(), os.path.basename(argv[0]))
    budget, args = float(argv[1]), argv[2:]
    import pytest

    root = os.getcwd()
    cov, problem, kind = None, "", ""
    try:
        cov, kind = start_tracer(root)
    except Exception as exc:  # noqa: BLE001 - a broken coverage setup only costs the spectra
        problem = f"coverage did not start: {type(exc).__name__}: {exc}"
    if cov is None:  # pytest runs outside the except blocks: its failures must not chain to our ImportError
        write(out, {"error": problem})
        return int(pytest.main(args))
    recorder = SpectraRecorder(cov, budget)
    try:
        code = pytest.main(args, plugins=[recorder, pytest_cov_muted(pytest)])
    finally:
        if recorder.tracing:
            cov.stop()
    # Past the time budget, the tests traced before it still make spectra (the later ones count for nothing).
    outcomes = {test: outcome for test, outcome in recorder.outcomes.items() if test in recorder.traced}
    failed = sum(1 for o in outcomes.values() if o == "failed")
    if not recorder.tracing and not (recorder.budget_spent and failed):
        write(out, {"error": recorder.note})
        return int(code)
    try:
        counts = line_counts(cov.get_data(), root, outcomes)
    except Exception as exc:  # noqa: BLE001 - as above
        write(out, {"error": f"reading the coverage data failed: {type(exc).__name__}: {exc}"})
        return int(code)
    payload = {"failed": failed, "passed": len(outcomes) - failed, "lines": counts, "tracer": kind}
    write(out, {**payload, "partial": recorder.note} if recorder.budget_spent else payload)
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
