"""The spectra plugin past its time budget: the tests traced before it still make spectra, the later ones count
for nothing (a large test file on a loaded machine used to lose all of them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lsp_agent.tools.fault_lines import PLUGIN

CODE = """def pick(items, low):
    if not items:
        return low
    return max(items)
"""
TESTS = """import time
from mod import pick


def test_empty_fails():
    assert pick([], 3) == 0


def test_slow_passes():
    time.sleep({sleep})
    assert pick([1, 2], 0) == 2


def test_after_the_budget_passes():
    assert pick([5], 0) == 5
"""


def traced(root: Path, budget: float, sleep: float) -> dict:
    """Run the plugin over `root`'s tests with `budget` seconds of tracing; its JSON."""
    (root / "mod.py").write_text(CODE)
    (root / "test_mod.py").write_text(TESTS.format(sleep=sleep))
    env = {**os.environ, "TMPDIR": str(root), "PYTHONPATH": str(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    argv = [sys.executable, "-c", PLUGIN.read_text(), "out.json", str(budget), "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*argv, "test_mod.py"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert "1 failed, 2 passed" in done.stdout  # every test still ran
    return json.loads((root / "out.json").read_text())


def test_tests_traced_before_the_budget_still_make_spectra(tmp_path: Path) -> None:
    spectra = traced(tmp_path, budget=2.0, sleep=4.0)  # collection takes well under 2 s
    assert spectra["partial"] == "tracing stopped at its time budget"
    assert (spectra["failed"], spectra["passed"]) == (1, 1)  # the third test started past the budget
    assert spectra["lines"]["mod.py"]["3"] == [1, 0]  # `return low`: the failing test ran it, no pass did
    assert spectra["lines"]["mod.py"]["4"] == [0, 1]


def test_within_the_budget_every_test_counts(tmp_path: Path) -> None:
    spectra = traced(tmp_path, budget=60, sleep=0)
    assert "partial" not in spectra and (spectra["failed"], spectra["passed"]) == (1, 2)
    assert spectra["lines"]["mod.py"]["4"] == [0, 2]


def test_no_failing_test_traced_before_the_budget_gives_no_spectra(tmp_path: Path) -> None:
    spectra = traced(tmp_path, budget=0.0, sleep=0)  # spent before the first test starts
    assert spectra == {"error": "tracing stopped at its time budget"}
