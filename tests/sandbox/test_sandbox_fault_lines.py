"""Fault localization from the named tests: one traced run in the real sandbox ranks the buggy line first, the
small profile's first message lists it, and without coverage.py the tests still run as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import asker, copy_mode_isolation, run_scripted, snapshot

from lsp_agent.config import Settings
from lsp_agent.index import WorkspaceIndex
from lsp_agent.sandbox.isolation import DISABLE_ENV
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.fault_lines import HEADER, Spectra, read_spectra, suspicious_lines
from lsp_agent.tools.registry import ToolContext, default_registry
from lsp_agent.tools.test_runs import run_pytest

STATS = '''"""Small numeric helpers."""


def mean(xs):
    return sum(xs) / len(xs)


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return lo
    return x


def scale(xs, factor):
    return [x * factor for x in xs]
'''
BUGGY_LINE = 12  # `return lo` where clamp() should return hi

TEST_STATS = """from pkg.stats import clamp, mean, scale


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_far_high():
    assert clamp(5000, 0, 10) == 10


def test_scale():
    assert scale([1, 2], 3) == [3, 6]
"""
TASK = "The tests in tests/test_stats.py fail since the last change to pkg/stats.py; fix it."

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


@pytest.fixture
def stats_project(tmp_path: Path) -> Path:
    """A package with a one-line bug in clamp(): two tests fail, four pass."""
    root = tmp_path / "stats"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "stats.py").write_text(STATS)
    (root / "tests" / "test_stats.py").write_text(TEST_STATS)
    return root


def context(root: Path, **settings: object) -> ToolContext:
    """A tool context over `root` with its own overlay."""
    from lsp_agent.workspace.overlay import Overlay

    return ToolContext(root=root, overlay=Overlay(root), settings=Settings(**settings))


@pytest.mark.parametrize("mechanism", ["auto", "copy", "unisolated"])
def test_one_traced_run_ranks_the_buggy_line_first_and_leaves_the_workspace_untouched(
    stats_project: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(stats_project)
    if (
        mechanism == "unisolated"
    ):  # no namespaces: the code sees the scratch copy's own path and the host's /tmp
        monkeypatch.setenv(DISABLE_ENV, "namespace,unshare,bwrap")
    ctx = context(stats_project, allow_unisolated_exec=mechanism == "unisolated")
    copy = Sandbox(stats_project, isolation=copy_mode_isolation()) if mechanism == "copy" else None
    if copy is not None:
        ctx.extras["sandbox"] = copy
    report = run_pytest(ctx, ["tests/test_stats.py"], spectra=True)
    plain = run_pytest(ctx, ["tests/test_stats.py"])
    ctx.close()
    if copy is not None:
        copy.close()
    assert report.details() == plain.details()  # the same report as a plain run, plus the spectra
    assert report.counts == "2 failed, 4 passed" and not report.problem
    assert report.failed == [
        "tests/test_stats.py::test_clamp_high",
        "tests/test_stats.py::test_clamp_far_high",
    ]
    assert report.spectra is not None and (report.spectra.failed, report.spectra.passed) == (2, 4)
    assert report.spectra.lines["pkg/stats.py"][BUGGY_LINE] == (2, 0)  # both failures ran it, no pass did
    assert list(report.spectra.lines) == ["pkg/stats.py"]  # test modules are not traced
    suspects = suspicious_lines(report.spectra)
    assert [(s.path, s.line) for s in suspects][:1] == [("pkg/stats.py", BUGGY_LINE)]
    assert suspects[0].score == 1.0 and all(s.path == "pkg/stats.py" for s in suspects)
    # The traced run wrote nothing into the workspace or the run's overlay (no .coverage, no JSON, no cache).
    assert snapshot(stats_project) == before
    assert ctx.overlay.overrides() == {}


def test_spectra_that_cannot_be_read_give_none(tmp_path: Path) -> None:
    cases = ["not json", json.dumps({"error": "coverage is not installed"}), json.dumps({"failed": 1})]
    for i, text in enumerate(cases):
        path = tmp_path / f"spectra-{i}.json"
        path.write_text(text)
        assert read_spectra(path) is None and not path.exists()
    assert read_spectra(tmp_path / "missing.json") is None


def test_nothing_is_suspicious_without_passing_tests_or_when_a_whole_region_ties() -> None:
    only_failures = Spectra(2, 0, {"pkg/a.py": {3: (2, 0)}})
    assert suspicious_lines(only_failures) == []
    region = Spectra(1, 5, {"pkg/a.py": {n: (1, 0) for n in range(1, 20)}})
    assert suspicious_lines(region) == []  # 19 lines only the failing test ran: none stands out
    few = Spectra(1, 5, {"pkg/a.py": {4: (1, 0), 5: (1, 0), 9: (1, 4)}, "tests/test_a.py": {2: (1, 0)}})
    assert [(s.line, s.score) for s in suspicious_lines(few)] == [(4, 1.0), (5, 1.0)]  # 9 is below the floor


FINISH = {"content": '<THOUGHT>done</THOUGHT>\n<ACTION>{"name": "task_complete", "arguments": {}}</ACTION>'}
SMALL = {"tool_calling": "prompt", "profile": "small", "repair_lines": 0}  # the loop alone (no line repairs)


def first_task_message(requests: list[dict]) -> str:
    """The task's message in the first request (the worked example's task comes before it)."""
    return next(m["content"] for m in requests[0]["messages"] if m["content"].startswith("Task: " + TASK))


@pytest.mark.usefixtures("litellm_imported")
async def test_the_small_profile_first_message_lists_the_buggy_line_and_shows_its_code(
    stats_project: Path,
) -> None:
    before = snapshot(stats_project)
    with WorkspaceIndex(stats_project) as index:
        index.refresh()
        out = await run_scripted(
            stats_project,
            [FINISH],
            TASK,
            index=index,
            permission=asker("allow_once"),
            registry=register_exec_tools(default_registry()),
            **SMALL,
        )
    first = first_task_message(out.requests)
    assert "2 failed, 4 passed" in first
    listed = first.split(HEADER + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert listed[0] == f"pkg/stats.py:{BUGGY_LINE}: return lo"
    assert f"{BUGGY_LINE}:         return lo" in first  # the numbered code the model copies from
    assert first.index(HEADER) < first.index("Code that looks relevant")
    assert first.endswith(  # the request for an edit points at the top line
        f"The most suspicious line is pkg/stats.py line {BUGGY_LINE}: the bug is likely on or near it. "
        "Fix it with one SEARCH/REPLACE edit."
    )
    assert snapshot(stats_project) == before


@pytest.mark.usefixtures("litellm_imported")
async def test_a_denied_exec_permission_runs_nothing_and_lists_no_lines(stats_project: Path) -> None:
    out = await run_scripted(
        stats_project,
        [FINISH],
        TASK,
        permission=asker("deny"),
        registry=register_exec_tools(default_registry()),
        **SMALL,
    )
    first = first_task_message(out.requests)
    assert "I ran the tests" not in first and HEADER not in first and "most suspicious line" not in first
