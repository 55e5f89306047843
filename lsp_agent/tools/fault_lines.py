"""Spectrum-based fault localization: which lines the failing tests ran and the passing ones mostly did not.

The named tests run once, traced per test, in the project's own test interpreter (spectra_plugin.py, passed with
`python -c`, so nothing is written into the workspace): by coverage.py when the project's environment has it, else by
the plugin's own tracer (sys.monitoring on Python 3.12+, sys.settrace before); each line of a non-test file is scored with Ochiai,
failed(line) / sqrt(total_failed * (failed(line) + passed(line))), and the best few are shown to the model as
plain `path:line: code` lines. Any failure of the tracing only costs the spectra, never the test report.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.index.locate import file_kind

if TYPE_CHECKING:
    from lsp_agent.sandbox.runner import ExecResult
    from lsp_agent.sandbox.session import Sandbox
    from lsp_agent.workspace.overlay import Overlay

log = logging.getLogger(__name__)

PLUGIN = Path(__file__).with_name("spectra_plugin.py")
MIN_SCORE = 0.5  # below this a line is run by too many passing tests (or too few failing ones) to point at
MAX_SHOWN = 5
MAX_TIED = 10  # more lines than this share the best score: the spectra single out no line, so none is shown
MAX_CODE_CHARS = 120
TRACING_SHARE = 0.5  # tracing stops after this share of the test timeout; the rest of the tests run untraced
HEADER = "Lines run by the failing tests and by few passing ones (most suspicious first):"


@dataclass
class Spectra:
    """How many tests failed and passed, and per file and line how many of each ran it."""

    failed: int
    passed: int
    lines: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    tracer: str = ""  # what recorded them: coverage, or (without it) monitoring or settrace


@dataclass(frozen=True)
class SuspectLine:
    """One line ranked by Ochiai, with the counts behind its score."""

    path: str
    line: int
    score: float
    failed: int
    passed: int


def traced_run(
    sandbox: Sandbox,
    overlay: Overlay,
    python: str,
    args: Sequence[str],
    *,
    timeout: float,
    cancel: threading.Event | None = None,
) -> tuple[ExecResult, Spectra | None]:
    """Run `python -m pytest ARGS` in the sandbox with per-test line coverage; (its result, the spectra or None)."""
    name = f"lsp-agent-spectra-{uuid.uuid4().hex}.json"
    argv = [python, "-c", PLUGIN.read_text(encoding="utf-8"), name, f"{timeout * TRACING_SHARE:g}", *args]
    result = sandbox.run(argv, overlay, timeout=timeout, cancel=cancel)
    found = sandbox.scratch.tmp / name
    if result.timed_out or result.cancelled:
        log.info("no fault localization: the traced test run did not finish")
        found.unlink(missing_ok=True)
        return result, None
    return result, read_spectra(found)


def read_spectra(path: Path) -> Spectra | None:
    """The spectra the plugin wrote to `path` (removed after reading), or None with a log line saying why."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.info("no fault localization: the traced test run left no readable data (%s)", exc)
        return None
    finally:
        path.unlink(missing_ok=True)
    if not isinstance(payload, dict) or "error" in payload:
        log.info("no fault localization: %s", payload.get("error") if isinstance(payload, dict) else payload)
        return None
    try:
        lines = {
            str(rel): {int(n): (int(c[0]), int(c[1])) for n, c in per_line.items()}
            for rel, per_line in payload["lines"].items()
        }
        return Spectra(int(payload["failed"]), int(payload["passed"]), lines, str(payload.get("tracer", "")))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        log.info("no fault localization: malformed spectra (%s)", exc)
        return None


def ochiai(failed: int, passed: int, total_failed: int) -> float:
    """failed / sqrt(total_failed * (failed + passed)); 0 for a line no failing test ran."""
    if failed == 0 or total_failed == 0:
        return 0.0
    return failed / math.sqrt(total_failed * (failed + passed))


def suspicious_lines(spectra: Spectra, limit: int = MAX_SHOWN, floor: float = MIN_SCORE) -> list[SuspectLine]:
    """The non-test lines with the best Ochiai scores above `floor`, ties broken by fewer passing tests.

    Nothing when no test failed or none passed (every line the failing tests ran looks the same then), or when
    more than MAX_TIED lines share the best score (a whole region only the failing tests reach).
    """
    if spectra.failed == 0 or spectra.passed == 0:
        return []
    ranked = [
        SuspectLine(path, line, ochiai(failed, passed, spectra.failed), failed, passed)
        for path, per_line in spectra.lines.items()
        if path.endswith(".py") and file_kind(path) != "test"
        for line, (failed, passed) in per_line.items()
    ]
    ranked = [s for s in ranked if s.score >= floor]
    ranked.sort(key=lambda s: (-round(s.score, 9), s.passed, s.path, s.line))
    if len(ranked) > MAX_TIED and _same_rank(ranked[0], ranked[MAX_TIED]):
        return []
    return ranked[:limit]


def ranked_lines(spectra: Spectra, paths: Sequence[str]) -> list[SuspectLine]:
    """Every line of `paths` (all non-test Python files when empty) a failing test ran, best Ochiai score first,
    ties broken by fewer passing tests: the order in which sampled line repairs try them."""
    ranked = [
        SuspectLine(path, line, ochiai(failed, passed, spectra.failed), failed, passed)
        for path, per_line in spectra.lines.items()
        if (path in paths if paths else path.endswith(".py") and file_kind(path) != "test")
        for line, (failed, passed) in per_line.items()
        if failed > 0
    ]
    ranked.sort(key=lambda s: (-round(s.score, 9), s.passed, s.path, s.line))
    return ranked


def _same_rank(a: SuspectLine, b: SuspectLine) -> bool:
    """True when two lines have the same score and the same number of passing tests (nothing orders them)."""
    return round(a.score, 9) == round(b.score, 9) and a.passed == b.passed


def describe_suspects(suspects: list[SuspectLine], read_lines: Callable[[str], list[str]]) -> str:
    """The model's view: a header, then one `path:line: code` per suspect ('' when there are none)."""
    shown: list[str] = []
    for suspect in suspects:
        try:
            lines = read_lines(suspect.path)
        except (OSError, ValueError):
            continue
        if 0 < suspect.line <= len(lines):
            code = lines[suspect.line - 1].strip()
            shown.append(f"{suspect.path}:{suspect.line}: {code[:MAX_CODE_CHARS]}")
    return "\n".join([HEADER, *shown]) if shown else ""
