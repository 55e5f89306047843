"""The schedule rank (`sites`): how soon line repairs make the request that can produce a task's fix.

Line repairs (lsp_agent/agent/repair/line_repair.py) spend one step per request, in the order of
line_schedule.request_schedule, the schedule the agent itself follows; here it is made as the small profile with an
infill template makes it at the benchmark's default budget (`--max-steps`, `repairLines`' default). The rank is the
1-based position of the first request that can bring the fix:
- a one-line bug, or one on a continuation line: the line filled in (INFILL) or asked about (LINE) at the bug line;
- a missing statement: a line inserted (INSERT) at the gap where it was removed (after the line before it, or after
  any blank or comment line between that line and the gap);
- a dropped condition part: the condition extended (EXTEND) at the condition's line;
- two related lines: no single request can (`n/a`, not a miss of the schedule).
Recall@k: tasks whose rank is at most k; "in budget": those that have a rank at all (the schedule is the budget's).
"""

from __future__ import annotations

from typing import Any

from benchmarks.repair.build import Task

RECALL_AT = (1, 3, 5, 10)
NO_SINGLE_REQUEST = ("related_lines",)  # both lines must change: no one request can produce the fix
LINE_KINDS, INSERT, EXTEND = ("infill", "line"), "insert", "extend"  # line_schedule's kinds of request

Scheduled = tuple[str, int, str]  # (path, line, kind) of one request


def fixing_requests(task: Task, buggy_lines: list[str]) -> set[Scheduled] | None:
    """The requests that can produce the task's fix, None when no single request can."""
    if task.kind in NO_SINGLE_REQUEST:
        return None
    if task.kind == "missing_statement":
        gap = task.line - 1  # the statement was removed: it goes back after the line before it
        gaps = {gap}
        while gap > 0 and _blank(buggy_lines[gap - 1]):
            gap -= 1
            gaps.add(gap)
        return {(task.file, line, INSERT) for line in gaps}
    if task.kind == "dropped_condition_part":
        return {(task.file, task.line, EXTEND)}
    return {(task.file, task.line, kind) for kind in LINE_KINDS}


def _blank(line: str) -> bool:
    """A line that holds no code (empty or a comment)."""
    return not line.strip() or line.strip().startswith("#")


def schedule_rank(task: Task, buggy_lines: list[str], schedule: list[Scheduled]) -> int | None:
    """The 1-based position in `schedule` of the first request that can produce the fix (None: none can, or the
    task needs more than one request: see `fixing_requests`)."""
    wanted = fixing_requests(task, buggy_lines)
    if wanted is None:
        return None
    return next((n for n, request in enumerate(schedule, 1) if request in wanted), None)


def schedule_table(results: list[dict[str, Any]]) -> str:
    """Recall of the schedule rank at RECALL_AT and within the budget, over all tasks, per kind and per split; the
    kinds no single request can fix are counted apart."""
    groups: list[tuple[str, list[dict[str, Any]]]] = [("all", results)]
    groups += [(k, [r for r in results if r["kind"] == k]) for k in sorted({r["kind"] for r in results})]
    splits = sorted({r.get("split") or "" for r in results} - {""})
    groups += [(f"split {s}", [r for r in results if r.get("split") == s]) for s in splits]
    head = " ".join(f"{'@' + str(k):>7}" for k in RECALL_AT)
    rows = [f"{'schedule rank':<24} {head} {'in budget':>9}"]
    for label, group in groups:
        single = [r for r in group if r["kind"] not in NO_SINGLE_REQUEST]
        if not single:
            rows.append(f"{label:<24} {'no single request can fix these':>41} ({len(group)} tasks)")
            continue
        cells = [_within(single, k) for k in RECALL_AT]
        cells.append(_within(single, None))
        skipped = len(group) - len(single)
        note = f"  ({skipped} needing two lines left out)" if skipped else ""
        rows.append(f"{label:<24} " + " ".join(f"{c:>7}" for c in cells[:-1]) + f" {cells[-1]:>9}{note}")
    return "\n".join(rows)


def _within(results: list[dict[str, Any]], k: int | None) -> str:
    """How many of `results` have a schedule rank of at most k (any rank when k is None), of how many."""
    found = sum(1 for r in results if r.get("schedule") is not None and (k is None or r["schedule"] <= k))
    return f"{found}/{len(results)}"
