"""Model-free: does the small profile's line repair ask about the bug's line, and how soon? (`sites`)

Per task, a fresh buggy copy; in a child process with the agents' environment, the named tests run once with
spectra as the agent runs them up front (tools/test_runs.run_pytest), then the rank of the bug's line among
- lsp-agent's repair sites (agent/line_sites.repair_sites: the lines line repairs ask about, in order), and
- plain Ochiai (the baseline: the failing tests' repairable lines of the named files by Ochiai, ties to fewer
  passing tests, then line order; no conditions, nearness or defaults), the usual spectrum-based ranking;
and the schedule rank (schedule.py): the position, among line repairs' requests at the default budget, of the
first request that can produce the fix (an insertion for a missing statement, an extension for a dropped part).
Recall@k is the share of tasks whose bug line is among the first k; the budget is the sites' step budget.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.repair.agents import agent_environment
from benchmarks.repair.build import Task, read_task_set
from benchmarks.repair.projects import Project, copy_tree, fetch, project_named, testenv_python
from benchmarks.repair.schedule import NO_SINGLE_REQUEST, schedule_rank, schedule_table

RECALL_AT = (1, 3, 5)
BUDGET_STEPS = (
    15  # the default budget is the sites of a run with this many steps (the benchmark's --max-steps)
)
SCHEDULE_STEPS = 20  # the schedule rank's run: `run`'s default --max-steps


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags choosing the task set and the tasks (`sites`, `asks`)."""
    parser.add_argument("--seed", type=int, default=1, help="the task set built with this seed (default 1)")
    parser.add_argument("--task-file", type=Path, help="a task file instead of the seed's")
    parser.add_argument("--tasks", nargs="+", metavar="ID", help="only these task ids")
    parser.add_argument("--project", action="append", help="only tasks of these projects (repeatable)")
    parser.add_argument("--limit", type=int, help="only the first N tasks (after --tasks/--project)")


def add_sites_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `sites`."""
    add_task_arguments(parser)
    parser.add_argument(
        "--budget", type=int, help=f"sites asked about (default: those of a {BUDGET_STEPS}-step run)"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=SCHEDULE_STEPS,
        help=f"the run whose request schedule is ranked (default {SCHEDULE_STEPS}, as `run`)",
    )
    parser.add_argument("--out", type=Path, help="results JSON (default: none)")
    parser.add_argument(
        "--without-coverage",
        action="store_true",
        help="hide coverage.py from the tests (lsp-agent's own tracer)",
    )


def site_ranks(root: Path, task: Task, budget: int, max_steps: int = SCHEDULE_STEPS) -> dict[str, Any]:
    """In the task's environment: the 1-based ranks of the bug's line among the sites and in plain Ochiai, and
    of the first request that can fix it in the schedule of a `max_steps` run (schedule.py)."""
    from lsp_agent.agent.repair.line_candidates import repairable
    from lsp_agent.agent.repair.line_schedule import request_schedule
    from lsp_agent.agent.repair.line_sites import repair_sites
    from lsp_agent.settings_sources import load_settings
    from lsp_agent.tools.fault_lines import ranked_lines
    from lsp_agent.tools.registry import ToolContext
    from lsp_agent.tools.test_runs import named_source_files, named_test_files, run_pytest
    from lsp_agent.workspace.overlay import Overlay

    overlay = Overlay(root)
    settings, errors = load_settings(root)  # LSP_AGENT_PYTHON: the test venv
    if errors:
        raise RuntimeError("; ".join(errors))
    ctx = ToolContext(root=root, overlay=overlay, settings=settings)
    report = run_pytest(ctx, named_test_files(task.description, overlay.is_file), spectra=True)
    if report.spectra is None or report.passed:
        problem = (
            "the named tests pass" if report.passed else report.problem or "no spectra (no coverage.py?)"
        )
        return {
            "task": task.id,
            "kind": task.kind,
            "split": task.split,
            "sites": None,
            "ochiai": None,
            "schedule": None,
            "problem": problem,
            "failure": report.first_failure,
        }
    sites = repair_sites(task.description, overlay, report, budget)
    named = named_source_files(task.description, overlay.is_file)
    ranked = ranked_lines(report.spectra, named) or ranked_lines(
        report.spectra, []
    )  # as repair_sites falls back
    lines = {path: overlay.read_text(path).splitlines() for path in {s.path for s in ranked}}
    ochiai = [
        (s.path, s.line)
        for s in ranked
        if 0 < s.line <= len(lines[s.path]) and repairable(lines[s.path][s.line - 1])
    ]
    bug = (task.file, task.line)
    made = request_schedule(  # as the small profile with an infill template makes it
        task.description, overlay, report, settings.repair_lines, max_steps, True, settings.repair_additions
    )
    schedule = [(site.path, site.line, kind) for site, kind in made]
    buggy = overlay.read_text(task.file).splitlines()
    return {
        "task": task.id,
        "kind": task.kind,
        "split": task.split,
        "sites": _rank(bug, [(s.path, s.line) for s in sites]),
        "ochiai": _rank(bug, ochiai),
        "schedule": schedule_rank(task, buggy, schedule),
        "requests": [list(request) for request in schedule],  # (path, line, kind), in order
        "problem": "",
        "tracer": report.spectra.tracer,  # coverage, or monitoring/settrace with --without-coverage
        "failure": report.first_failure,  # what a line-repair request shows (`asks`)
    }


def _rank(bug: tuple[str, int], order: list[tuple[str, int]]) -> int | None:
    """The 1-based position of `bug` in `order`, None when absent."""
    return order.index(bug) + 1 if bug in order else None


def rank_task(
    task: Task,
    project: Project,
    pristine: Path,
    python: Path,
    budget: int,
    *,
    coverage: bool = True,
    max_steps: int = SCHEDULE_STEPS,
) -> dict[str, Any]:
    """site_ranks in a child process with the agents' environment, over a fresh buggy copy of `pristine`."""
    from benchmarks.repair.run import make_buggy

    scratch = Path(tempfile.mkdtemp(prefix=f"sites-{task.id}-"))
    try:
        copy = copy_tree(pristine, scratch / project.key)
        make_buggy(copy, task)
        env = agent_environment(python, copy, project, scratch, coverage=coverage)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env["PYTHONPATH"]])
        child = [
            sys.executable,
            "-m",
            "benchmarks.repair.sites",
            str(copy),
            json.dumps(asdict(task)),
            str(budget),
            str(max_steps),
        ]
        done = subprocess.run(child, env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode:
        raise RuntimeError(f"{task.id}: the ranking failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def run_sites(args: argparse.Namespace, task_path: Path) -> int:
    """Rank the sites of the chosen tasks, print recall against plain Ochiai, save the ranks."""
    from benchmarks.repair.run import select_tasks
    from lsp_agent.agent.repair.line_sites import site_budget
    from lsp_agent.config import Settings

    _, tasks = read_task_set(task_path)
    tasks = select_tasks(tasks, args.tasks, args.project, args.limit)
    budget = args.budget or site_budget(Settings().repair_lines, BUDGET_STEPS)
    python = testenv_python()
    results = []
    for task in tasks:
        project = project_named(task.project)
        coverage = not args.without_coverage
        ranks = rank_task(
            task, project, fetch(project), python, budget, coverage=coverage, max_steps=args.max_steps
        )
        results.append(ranks)
        schedule = "n/a" if task.kind in NO_SINGLE_REQUEST else _shown(ranks["schedule"])
        print(
            f"{task.id:<16} {task.kind:<22} {task.split or '-':<8} sites {_shown(ranks['sites']):>4}  "
            f"ochiai {_shown(ranks['ochiai']):>4}  schedule {schedule:>4}  {ranks['problem']}".rstrip()
        )
    print()
    print(recall_table(results, budget))
    print()
    print(schedule_table(results))
    if args.out:
        saved = {"budget": budget, "max_steps": args.max_steps, "results": results}
        args.out.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"results: {args.out}")
    return 0


def recall_table(results: list[dict[str, Any]], budget: int) -> str:
    """Recall@k of the sites and of plain Ochiai, with their ratio."""
    rows = [f"{'recall@k':<10} {'sites':>9} {'ochiai':>9} {'ratio':>6}   ({len(results)} tasks)"]
    for k in sorted({*RECALL_AT, budget}):
        ours = sum(1 for r in results if r["sites"] is not None and r["sites"] <= k)
        base = sum(1 for r in results if r["ochiai"] is not None and r["ochiai"] <= k)
        ratio = f"{ours / base:.2f}" if base else "-"
        rows.append(f"{'@' + str(k):<10} {ours:>4}/{len(results):<4} {base:>4}/{len(results):<4} {ratio:>6}")
    return "\n".join(rows)


def _shown(rank: int | None) -> str:
    """A rank, or '-' for a line not ranked."""
    return "-" if rank is None else str(rank)


if __name__ == "__main__":  # the child: python -m benchmarks.repair.sites COPY TASK_JSON BUDGET MAX_STEPS
    root, task_json, budget, steps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(site_ranks(root, Task(**json.loads(task_json)), budget, steps)))
