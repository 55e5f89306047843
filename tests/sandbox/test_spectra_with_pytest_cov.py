"""Per-test line spectra of a project whose own pytest options turn pytest-cov on (`--cov` in addopts): pytest-cov's
Coverage would take the tracer over and leave the spectra empty, so the traced run tells it not to measure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_sandbox_fault_lines import BUGGY_LINE, context, stats_project

from lsp_agent.tools.test_runs import run_pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins")]
__all__ = ["stats_project"]  # the fixture: clamp() with a one-line bug, two tests fail and four pass
pytest.importorskip("pytest_cov")

PYTEST_INI = """[pytest]
addopts = -p pytest_cov --cov=pkg --cov-report=term-missing
"""


def test_a_project_asking_pytest_cov_to_measure_still_gets_spectra_that_rank_the_bug(
    stats_project: Path,
) -> None:
    (stats_project / "pytest.ini").write_text(PYTEST_INI)
    own = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_stats.py"],
        cwd=stats_project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "coverage: platform" in own.stdout  # the project's own options do run pytest-cov
    ctx = context(stats_project)
    plain = run_pytest(ctx, ["tests/test_stats.py"])
    traced = run_pytest(ctx, ["tests/test_stats.py"], spectra=True)
    ctx.close()
    assert traced.counts == plain.counts == "2 failed, 4 passed"
    spectra = traced.spectra
    assert spectra is not None and spectra.tracer == "coverage" and (spectra.failed, spectra.passed) == (2, 4)
    assert list(spectra.lines) == ["pkg/stats.py"]
    assert spectra.lines["pkg/stats.py"][BUGGY_LINE] == (2, 0)  # both failures ran it, no pass did
