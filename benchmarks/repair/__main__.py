"""Command line of the repair benchmark: `build` the seeded task set, `run` both agents on it, `report` results.

python -m benchmarks.repair build [--seed 1] [--per-project 8] [--project NAME ...]
python -m benchmarks.repair run --api-base http://127.0.0.1:PORT/v1 [--limit N] [--tasks ID ...]
    [--project NAME ...] [--agents lsp-agent,mini-swe-agent] [--max-steps 20] [--time-limit 420]
python -m benchmarks.repair report RESULTS.json [MORE.json ...]   # several: pooled (other samples, one budget)
python -m benchmarks.repair sites [--tasks ID ...] [--budget 10] [--max-steps 20]  # model-free: lines and requests
python -m benchmarks.repair asks --api-base URL [--tasks ID ...] [--samples 2]  # one request about the bug's line
python -m benchmarks.repair classify RESULTS.json   # each repair: the original line, equivalent, or plausible only
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.repair.projects import (  # noqa: E402
    CACHE,
    HELD_OUT_PROJECTS,
    PROJECTS,
    SetupError,
    fetch,
    project_named,
)

DEFAULT_SEED = 1


def task_file(seed: int, multiline: bool = False, held_out_projects: bool = False) -> Path:
    """Where the task set of a seed is kept (the multi-line and held-out projects' ones beside it)."""
    kind = "multiline-" if multiline else ""
    return CACHE / f"tasks-{kind}{'heldout-projects-' if held_out_projects else ''}seed{seed}.json"


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the subcommand; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.repair", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="fetch the projects and build the seeded task set")
    build.add_argument("--seed", type=int, default=DEFAULT_SEED)
    build.add_argument("--per-project", type=int, default=8, help="tasks wanted per project (default 8)")
    build.add_argument("--project", action="append", help="only these projects (repeatable)")
    build.add_argument(
        "--out", type=Path, help="task file (default benchmarks/.cache/repair/tasks-seedN.json)"
    )
    build.add_argument(
        "--multiline",
        action="store_true",
        help="bugs beyond one line (multiline.py), split dev/held-out (default tasks-multiline-seedN.json)",
    )
    build.add_argument(
        "--held-out-projects",
        action="store_true",
        help="the projects never tuned on (projects.HELD_OUT_PROJECTS), every task held out "
        "(default tasks-heldout-projects-seedN.json)",
    )
    run = sub.add_parser("run", help="run the agents on the task set and judge them with the projects' tests")
    from benchmarks.repair.run import add_run_arguments

    add_run_arguments(run)
    sites = sub.add_parser(
        "sites", help="model-free: rank the bug's line among line repairs' sites and by Ochiai"
    )
    from benchmarks.repair.sites import add_sites_arguments

    add_sites_arguments(sites)
    asks = sub.add_parser(
        "asks", help="with a model: how often a request about the bug's line brings the fix"
    )
    from benchmarks.repair.asks import add_asks_arguments

    add_asks_arguments(asks)
    classify = sub.add_parser(
        "classify", help="each repaired task's patch: the original line, equivalent to it, or plausible only"
    )
    from benchmarks.repair.classify import add_classify_arguments

    add_classify_arguments(classify)
    report = sub.add_parser("report", help="print the tables of results files again (several: pooled)")
    report.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            return _build(args)
        if args.command == "run":
            from benchmarks.repair.run import run_benchmark

            return run_benchmark(args, task_file(args.seed) if args.task_file is None else args.task_file)
        if args.command == "sites":
            from benchmarks.repair.sites import run_sites

            return run_sites(args, task_file(args.seed) if args.task_file is None else args.task_file)
        if args.command == "asks":
            from benchmarks.repair.asks import run_asks

            return run_asks(args, task_file(args.seed) if args.task_file is None else args.task_file)
        if args.command == "classify":
            from benchmarks.repair.classify import run_classify

            return run_classify(args.results, args.task_file, args.out)
        from benchmarks.repair.report import pool_results, print_report

        print_report(pool_results(args.results))
        return 0
    except ValueError as exc:  # results files that do not pool
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SetupError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _build(args: argparse.Namespace) -> int:
    """`build`: fetch, build every project's tasks, write the task file, print the statistics."""
    from benchmarks.repair.build import assign_split, build_project, write_task_set
    from benchmarks.repair.projects import testenv_python
    from benchmarks.repair.report import print_build_stats

    projects = list(HELD_OUT_PROJECTS if args.held_out_projects else PROJECTS)
    if args.project:
        projects = [project_named(n) for n in args.project]
    python = testenv_python()
    tasks, stats = [], []
    for project in projects:
        tree = fetch(project)
        built, project_stats = build_project(
            project, tree, python, seed=args.seed, quota=args.per_project, multiline=args.multiline
        )
        tasks += built
        stats.append(project_stats)
    if args.multiline:
        assign_split(tasks)  # fixed now, before any change is measured on these tasks
    if args.held_out_projects:
        for task in tasks:
            task.split = "held_out"
    out = args.out or task_file(args.seed, args.multiline, args.held_out_projects)
    write_task_set(out, args.seed, tasks, stats)
    print_build_stats(tasks, stats)
    print(f"wrote {len(tasks)} tasks to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
