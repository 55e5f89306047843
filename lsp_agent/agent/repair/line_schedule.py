"""The order of line repairs' requests (agent/repair/line_repair.py), one schedule for the agent and the repair
benchmark's `sites` (its schedule rank): which line each request is about and what it asks for.

With an infill template the first request about each line fills it in (INFILL); code is added (a condition's
dropped part: EXTEND, a missing line: INSERT) with requests taken from those that ask about the best lines again
(LINE requests, last). What the code itself shows is missing or misread (line_evidence.py) is asked about first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from lsp_agent.agent.repair.line_evidence import (
    dropped_values,
    empty_promises,
    formatted_none,
    formatting_starts,
    misread_values,
    mixed_returns,
    unbalanced_counters,
)
from lsp_agent.agent.repair.line_insertions import (
    condition_parts,
    empty_callees,
    insertion_gaps,
    named_returnless_gaps,
    returnless_gaps,
)
from lsp_agent.agent.repair.line_sites import LOOP_STEPS, repair_sites, second_requests, site_budget
from lsp_agent.tools.fault_lines import SuspectLine
from lsp_agent.tools.test_runs import named_source_files

if TYPE_CHECKING:
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.workspace.overlay import Overlay

LINE, INFILL, INSERT, EXTEND = "line", "infill", "insert", "extend"  # the kinds of request
ADDITION_SITES = 2  # the best lines whose condition is extended (a dropped part of it)
RETURNLESS_SITES = 5  # the best lines whose functions' ends are tried first when a None failed the test
RETURNLESS_REQUESTS = 3  # of those, at most
EVIDENT_REQUESTS = 2  # insertions of each kind the code itself calls for (line_evidence.py), at most

Request = tuple[SuspectLine, str]  # the line a request is about, and its kind


def request_schedule(
    task: str,
    overlay: Overlay,
    report: TestReport,
    repair_lines: int,
    max_iterations: int,
    infill: bool,
    additions: int,
) -> list[Request]:
    """The requests line repairs make, in order, for `repair_lines` requests in a run of `max_iterations` steps:
    one per line (repair_sites), filling it in with `infill`, else a line request; with `infill`, up to `additions`
    more that add code (`repairAdditions`: steps the loop can spare), then in place of second requests if more
    are found; then the best lines asked about again (line requests). Insertions the code itself calls for
    (_evident) go first, and so do those where a None can come from when the failure compares a None with the
    value wanted (right after the lines when it used a None); the other additions after them."""
    sites = repair_sites(task, overlay, report, site_budget(repair_lines, max_iterations))
    again = sites[: second_requests(repair_lines, max_iterations, len(sites))]
    if not infill:
        return [(site, LINE) for site in sites + again]
    room = max(0, min(additions, max_iterations - LOOP_STEPS - len(sites) - len(again)))
    returned, used = _none_returned(report.first_failure), _none_used(report.first_failure)
    evident = _evident(task, overlay, sites, report.first_failure)
    pointed = _named_returnless(task, overlay, report.first_failure) if returned else []
    pointed += _returnless(overlay, sites) if returned or used else []
    found = _distinct(evident + pointed + _additions(overlay, sites))[: room + len(again)]
    again = again[: len(again) - max(0, len(found) - room)]
    first = [request for request in found if request in evident or (returned and request in pointed)]
    later = [request for request in found if request not in first]
    fills = _distinct(first + [(site, INFILL) for site in sites])[len(first) :]  # a line filled in once
    return first + fills + later + [(site, LINE) for site in again]


def _none_returned(failure: str) -> bool:
    """Whether the first failure's error lines compare a None with the value the test wanted (`assert None == 1`,
    `None != 1`, `where None = f(...)`): a function that falls off its end, its `return` missing."""
    errors = [line for line in failure.splitlines() if line.startswith("E ")]
    return any(re.search(r"\bassert None\b|\bNone [!=]=|[!=]= None\b|where None = ", line) for line in errors)


def _none_used(failure: str) -> bool:
    """Whether the first failure's error lines show a None used as a value (`'NoneType' object ...`): maybe a
    missing `return`, as likely a wrong line (the insertions go right after the lines are filled in)."""
    return any("NoneType" in line for line in failure.splitlines() if line.startswith("E "))


def _named_returnless(task: str, overlay: Overlay, failure: str) -> list[Request]:
    """Insertions where control falls off the end of the functions the failure names returning None (pytest's
    `where None = <function NAME at ...>(...)` or `where None = NAME(...)`), in the source files the task names."""
    names = dict.fromkeys(
        re.findall(r"where None = (?:<function |<bound method )?(?:[\w.]*\.)?(\w+)", failure)
    )
    found: list[Request] = []
    for path in named_source_files(task, overlay.is_file):
        text = overlay.read_text(path)
        found += [
            (SuspectLine(path, gap, 0.0, 0, 0), INSERT)
            for n in names
            for gap in named_returnless_gaps(text, n)
        ]
    return _distinct(found)[:RETURNLESS_REQUESTS]


def _evident(task: str, overlay: Overlay, sites: list[SuspectLine], failure: str) -> list[Request]:
    """Requests the code itself calls for (line_evidence.py), at most EVIDENT_REQUESTS of each kind: insertions at
    the end of a function of the task's files with only a docstring that promises a value, where the best
    RETURNLESS_SITES lines' functions drop a value they built, where their class misses a counter's change, and,
    when the failure shows a None formatted into text, at the start of the functions of the lines that format
    values into text, and, when it shows any None, where the best lines' functions that return a value elsewhere
    fall off their end; then the lines of those functions that may read the wrong one of two values unpacked
    together, filled in."""
    files = named_source_files(task, overlay.is_file) or list(dict.fromkeys(site.path for site in sites))
    promises = [
        (SuspectLine(path, gap, 0.0, 0, 0), INSERT)
        for path in files
        for gap in empty_promises(_text(overlay, path))
    ]
    best, guarded = sites[:RETURNLESS_SITES], sites if formatted_none(failure) else []
    none_seen = bool(guarded) or _none_returned(failure) or _none_used(failure)
    kinds = [
        promises,
        _each(overlay, best, dropped_values, INSERT),
        _each(overlay, best, unbalanced_counters, INSERT),
        _each(overlay, best if none_seen else [], mixed_returns, INSERT),
        _each(overlay, guarded, formatting_starts, INSERT),
        _each(overlay, best, misread_values, INFILL),
    ]
    return _distinct([request for kind in kinds for request in _distinct(kind)[:EVIDENT_REQUESTS]])


def _each(
    overlay: Overlay, sites: list[SuspectLine], rule: Callable[[str, int], list[int]], kind: str
) -> list[Request]:
    """A request of `kind` at each line `rule` finds for each site (given the site's file and line)."""
    return [
        (replace(site, line=line), kind)
        for site in sites
        for line in rule(_text(overlay, site.path), site.line)
    ]


def _text(overlay: Overlay, path: str) -> str:
    """A file's text as the run sees it ('' when it cannot be read)."""
    try:
        return overlay.read_text(path)
    except (OSError, ValueError):
        return ""


def _returnless(overlay: Overlay, sites: list[SuspectLine]) -> list[Request]:
    """Insertions where a None could come from: where control falls off the end of the best RETURNLESS_SITES
    lines' functions (line_insertions.returnless_gaps), and at the end of a function they call that has nothing
    but its docstring."""
    found: list[Request] = []
    for site in sites[:RETURNLESS_SITES]:
        text = overlay.read_text(site.path)
        gaps = returnless_gaps(text, site.line) + empty_callees(text, site.line)
        found += [(replace(site, line=gap), INSERT) for gap in gaps]
    return _distinct(found)[:RETURNLESS_REQUESTS]


def _additions(overlay: Overlay, sites: list[SuspectLine]) -> list[Request]:
    """The requests that add code at the best lines: the best ADDITION_SITES lines' conditions extended, then a
    line inserted in the best line's function (line_insertions.insertion_gaps)."""
    found: list[Request] = []
    for site in sites[:ADDITION_SITES]:
        line = overlay.read_text(site.path).splitlines()[site.line - 1 : site.line]
        if line and condition_parts(line[0]) is not None:
            found.append((site, EXTEND))
    if sites:  # the best line's function: a line missing at its end, at its start, or after the line
        top = sites[0]
        found += [
            (replace(top, line=gap), INSERT) for gap in insertion_gaps(overlay.read_text(top.path), top.line)
        ]
    return found


def _distinct(requests: list[Request]) -> list[Request]:
    """The requests without repeats (the same kind at the same line, whatever the scores), in order."""
    seen: set[tuple[str, int, str]] = set()
    kept = []
    for site, kind in requests:
        if (site.path, site.line, kind) not in seen:
            seen.add((site.path, site.line, kind))
            kept.append((site, kind))
    return kept
