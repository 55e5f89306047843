"""The order of line repairs' requests (agent/repair/line_repair.py), one schedule for the agent and the repair
benchmark's `sites` (its schedule rank): which line each request is about and what it asks for.

With an infill template the first request about each line fills it in (INFILL); code is added (a condition's
dropped part: EXTEND, a missing line: INSERT) with requests taken from those that ask about the best lines again
(LINE requests, last).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lsp_agent.agent.repair.line_insertions import condition_parts, insertion_gaps
from lsp_agent.agent.repair.line_sites import repair_sites, second_requests, site_budget

if TYPE_CHECKING:
    from lsp_agent.tools.fault_lines import SuspectLine
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.workspace.overlay import Overlay

LINE, INFILL, INSERT, EXTEND = "line", "infill", "insert", "extend"  # the kinds of request
ADDITION_SITES = 2  # the best lines whose condition is extended (a dropped part of it)

Request = tuple["SuspectLine", str]  # the line a request is about, and its kind


def request_schedule(
    task: str, overlay: Overlay, report: TestReport, repair_lines: int, max_iterations: int, infill: bool
) -> list[Request]:
    """The requests line repairs make, in order, for `repair_lines` requests in a run of `max_iterations` steps:
    one per line (repair_sites), filling it in with `infill`, else a line request; then code added at the best
    lines (with `infill`), then the best lines asked about again (line requests)."""
    sites = repair_sites(task, overlay, report, site_budget(repair_lines, max_iterations))
    again = sites[: second_requests(repair_lines, max_iterations, len(sites))]
    additions = _additions(overlay, sites, len(again)) if infill else []
    again = again[: len(again) - len(additions)]
    return [(site, INFILL if infill else LINE) for site in sites] + additions + [(s, LINE) for s in again]


def _additions(overlay: Overlay, sites: list[SuspectLine], quota: int) -> list[Request]:
    """The requests that add code at the best lines, at most `quota`: the best ADDITION_SITES lines' conditions
    extended, then a line inserted in the best line's function (line_insertions.insertion_gaps)."""
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
    return list(dict.fromkeys(found))[:quota]
