"""Judging an agent's work on a task copy with the project's own tests, and naming why a failure failed.

Before the tests run, the project's test files are put back as the sdist has them (an agent that edits the
tests does not get to grade itself); new conftest.py files are removed.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.repair.agents import AgentOutcome
from benchmarks.repair.build import Task
from benchmarks.repair.mutations import Mutation
from benchmarks.repair.projects import IGNORED_DIRS, Project
from benchmarks.repair.suite import run_pytest

JUDGE_TIMEOUT = 600.0
LSP_ITERATION_LIMIT = "max_iterations"
MINI_ITERATION_LIMIT = "LimitsExceeded"
MINI_FORMAT_EXIT = "RepeatedFormatError"


@dataclass
class Verdict:
    """What the tests say about a copy after an agent ran, and the failure class when not repaired."""

    repaired: bool
    named_passed: bool
    suite_passed: bool
    exact_fix: bool  # the buggy file is byte-for-byte the sdist's again
    failure: str  # "" when repaired; else one of report.FAILURE_CLASSES
    edited_files: list[str] = field(default_factory=list)
    new_files: list[str] = field(default_factory=list)
    touched_tests: list[str] = field(default_factory=list)
    # the agent's changes to source files, against the buggy copy: {path: [[start, end, new lines], ..]}
    patch: dict[str, list[list]] = field(default_factory=dict)


def snapshot(tree: Path) -> dict[str, str]:
    """{relative path: sha256} of every file in the tree, caches left out."""
    digests = {}
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree)
        if (
            path.is_file()
            and not path.is_symlink()
            and not IGNORED_DIRS & set(rel.parts)
            and path.suffix != ".pyc"
        ):
            digests[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def judge(
    task: Task,
    project: Project,
    copy: Path,
    before: dict[str, str],
    pristine: Path,
    python: Path,
    run: AgentOutcome,
) -> Verdict:
    """Restore the tests, run the named test file and the whole suite, classify the outcome."""
    after = snapshot(copy)
    changed = sorted(p for p in before if after.get(p) != before[p])
    added = sorted(p for p in after if p not in before)
    touched_tests = [p for p in changed + added if project.is_test_file(p)]
    _restore_tests(project, copy, pristine, touched_tests)
    named = run_pytest(copy, python, project, [task.test_file], timeout=JUDGE_TIMEOUT)
    suite = run_pytest(copy, python, project, list(project.tests), timeout=JUDGE_TIMEOUT)
    edited = [p for p in changed if not project.is_test_file(p)]
    exact = (copy / task.file).is_file() and (copy / task.file).read_bytes() == (
        pristine / task.file
    ).read_bytes()
    repaired = named.passed and suite.passed
    verdict = Verdict(repaired, named.passed, suite.passed, exact, "", edited, added, touched_tests)
    verdict.patch = {p: patch_of(_base(task, pristine, p), copy / p) for p in edited if p.endswith(".py")}
    if not repaired:
        verdict.failure = classify(run, edited=bool(edited), named_passed=named.passed)
    return verdict


def classify(run: AgentOutcome, *, edited: bool, named_passed: bool) -> str:
    """Why a task was not repaired: the edit's fault if there is one, else why the agent stopped without one."""
    if edited:
        return "broke_other_tests" if named_passed else "wrong_edit"
    if run.timed_out:
        return "timeout"
    if run.stop_reason in (LSP_ITERATION_LIMIT, MINI_ITERATION_LIMIT):
        return "iteration_limit"
    if run.stop_reason == MINI_FORMAT_EXIT or (run.steps and run.format_errors * 2 >= run.steps):
        return "format_errors"
    return "no_edit"


def _restore_tests(project: Project, copy: Path, pristine: Path, touched: list[str]) -> None:
    """Put edited test files back from the sdist; remove test files and conftest.py files the agent added."""
    for rel in touched:
        source, target = pristine / rel, copy / rel
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.is_file():
            target.unlink()


def buggy_text(task: Task, pristine: Path) -> str:
    """The task's file as the agents get it: the sdist's text with the bug injected."""
    mutation = Mutation(task.file, task.line, task.kind, task.function, task.original, task.mutated)
    return mutation.apply((pristine / task.file).read_text(encoding="utf-8"))


def _base(task: Task, pristine: Path, path: str) -> str:
    """A file as the agent found it."""
    return buggy_text(task, pristine) if path == task.file else (pristine / path).read_text(encoding="utf-8")


def _lines(text: str) -> list[str]:
    """Lines with their line breaks."""
    return io.StringIO(text, newline="").readlines()


def patch_of(base: str, changed: Path) -> list[list]:
    """The changes from `base` to the file at `changed`: [[start, end, new lines], ..] (0-based line ranges of
    `base`); a deleted file is one change to no lines."""
    new = _lines(changed.read_text(encoding="utf-8")) if changed.is_file() else []
    matcher = difflib.SequenceMatcher(None, _lines(base), new, autojunk=False)
    return [[i1, i2, new[j1:j2]] for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def apply_patch(base: str, changes: list[list]) -> str:
    """`base` with `patch_of`'s changes made."""
    lines = _lines(base)
    for start, end, new in sorted(changes, key=lambda change: change[0], reverse=True):
        lines[start:end] = new
    return "".join(lines)
