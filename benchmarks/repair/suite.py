"""Running a project's tests: pass/fail per test file, with a wall-clock limit, and which tests cover which line."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.repair.projects import Project

PYTEST_ARGS = ["-q", "-p", "no:cacheprovider", "--tb=no", "-rfE", "--color=no"]
# "FAILED tests/test_x.py::test_a - AssertionError" / "ERROR tests/test_x.py - ImportError" / "ERROR tests/test_x.py"
_REPORT_LINE = re.compile(r"^(FAILED|ERROR) ([^\s:]+)")
# Dumps {file: {line: [test node ids]}} from a coverage data file; runs in the test environment's interpreter.
_DUMP_CONTEXTS = """
import json, sys
from coverage import CoverageData
data = CoverageData(sys.argv[1]); data.read()
out = {}
for path in data.measured_files():
    by_line = data.contexts_by_lineno(path)
    out[path] = {str(line): sorted(c for c in ctx if c) for line, ctx in by_line.items()}
json.dump(out, sys.stdout)
"""


@dataclass
class SuiteResult:
    """One pytest run: exit code, failing test files (with counts), whether it hit the time limit."""

    returncode: int
    seconds: float
    timed_out: bool = False
    failed: Counter[str] = field(default_factory=Counter)
    output: str = ""

    @property
    def passed(self) -> bool:
        """True when pytest ran and every collected test passed."""
        return not self.timed_out and self.returncode == 0


def suite_environment(tree: Path, python: Path, project: Project) -> dict[str, str]:
    """The environment a project's tests run in: the test venv first on PATH, the project importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(project.environment(tree))
    env.pop("PYTHONHOME", None)
    return env


def run_pytest(
    tree: Path, python: Path, project: Project, targets: list[str], *, timeout: float, extra: list[str] = ()
) -> SuiteResult:
    """Run pytest on `targets` in `tree`; kills the whole process group at `timeout` seconds."""
    cmd = [str(python), "-m", "pytest", *PYTEST_ARGS, *extra, *targets]
    env = suite_environment(tree, python, project)
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        timed_out = True
    result = SuiteResult(proc.returncode, time.monotonic() - started, timed_out, output=output[-4000:])
    for line in output.splitlines():
        match = _REPORT_LINE.match(line)
        if match:
            result.failed[match.group(2)] += 1
    return result


def coverage_by_line(
    tree: Path, python: Path, project: Project, targets: list[str], *, timeout: float
) -> dict[str, dict[int, set[str]]]:
    """{source file relative to tree: {line: test files whose tests ran it}} from one run of the suite."""
    data_file = tree / ".coverage.repair"
    rcfile = tree / ".coveragerc.repair"
    rcfile.write_text(f"[run]\ndata_file = {data_file}\nsource = {tree / project.source_root}\n")
    extra = [f"--cov-config={rcfile}", "--cov", "--cov-context=test", "--cov-report="]
    try:
        result = run_pytest(tree, python, project, targets, timeout=timeout, extra=extra)
        if not result.passed:
            raise RuntimeError(f"the suite failed under coverage in {tree}:\n{result.output[-2000:]}")
        dump = subprocess.run(
            [str(python), "-c", _DUMP_CONTEXTS, str(data_file)], capture_output=True, text=True
        )
        if dump.returncode != 0:
            raise RuntimeError(f"could not read the coverage data: {dump.stderr[-1000:]}")
        raw: dict[str, dict[str, list[str]]] = json.loads(dump.stdout)
    finally:
        for leftover in tree.glob(".coverage*repair*"):
            leftover.unlink()
    covered: dict[str, dict[int, set[str]]] = {}
    root = tree.resolve()
    for path, lines in raw.items():
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(root):
            continue
        rel = resolved.relative_to(root).as_posix()
        covered[rel] = {int(n): {c.split("::", 1)[0] for c in ctx if "::" in c} for n, ctx in lines.items()}
    return covered


def list_test_files(tree: Path, targets: list[str]) -> list[str]:
    """The test modules (test_*.py, *_test.py) among `targets`, sorted, relative to `tree`."""
    found = set()
    for target in targets:
        path = tree / target
        candidates = [path] if path.is_file() else [*path.rglob("test_*.py"), *path.rglob("*_test.py")]
        found.update(p.relative_to(tree).as_posix() for p in candidates if "__pycache__" not in p.parts)
    return sorted(found)


def covered_by_name(tree: Path, sources: list[str], tests: list[str]) -> dict[str, dict[int, set[str]]]:
    """Without coverage data: a function's lines count as covered by each test file that mentions its name."""
    texts = {test: (tree / test).read_text(encoding="utf-8", errors="replace") for test in tests}
    covered: dict[str, dict[int, set[str]]] = {}
    for rel in sources:
        lines: dict[int, set[str]] = {}
        for node in ast.walk(ast.parse((tree / rel).read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            name = re.compile(rf"\b{re.escape(node.name)}\b")
            mentioned = {test for test, text in texts.items() if name.search(text)}
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                lines.setdefault(line, set()).update(mentioned)
        covered[rel] = {line: files for line, files in lines.items() if files}
    return covered


def has_coverage_plugin(python: Path) -> bool:
    """True when `python` can run pytest-cov (else `covered_by_name` stands in)."""
    done = subprocess.run([str(python), "-c", "import pytest_cov, coverage"], capture_output=True)
    return done.returncode == 0
