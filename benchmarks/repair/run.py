"""`run`: each task in a fresh copy per agent, lsp-agent then mini-swe-agent, judged by the project's tests.

Results go to a JSON file as they come (a stopped run keeps what it measured) and end in the tables of report.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.repair.agents import (
    AgentOutcome,
    Budget,
    agent_environment,
    run_lsp_agent,
    run_mini_swe_agent,
)
from benchmarks.repair.build import Task, read_task_set
from benchmarks.repair.judge import judge, snapshot
from benchmarks.repair.mutations import Mutation
from benchmarks.repair.projects import CACHE, Project, copy_tree, fetch, project_named, testenv_python
from benchmarks.repair.report import print_report

AGENTS = {"lsp-agent": run_lsp_agent, "mini-swe-agent": run_mini_swe_agent}
DEFAULT_API_BASE = "http://127.0.0.1:8080/v1"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `run`."""
    parser.add_argument("--seed", type=int, default=1, help="the task set built with this seed (default 1)")
    parser.add_argument("--task-file", type=Path, help="a task file instead of the seed's")
    parser.add_argument(
        "--api-base", default=DEFAULT_API_BASE, help=f"OpenAI-compatible endpoint ({DEFAULT_API_BASE})"
    )
    parser.add_argument("--model", default="openai/local", help="litellm model string (default openai/local)")
    parser.add_argument(
        "--api-key", default="sk-local", help="API key for the endpoint (a local one needs none)"
    )
    parser.add_argument("--agents", default="lsp-agent,mini-swe-agent", help="comma-separated agents to run")
    parser.add_argument(
        "--max-steps", type=int, default=20, help="model calls per task and agent (default 20)"
    )
    parser.add_argument(
        "--time-limit", type=float, default=420, help="seconds per task and agent (default 420)"
    )
    parser.add_argument(
        "--lsp-profile",
        choices=["auto", "full", "small"],
        default="auto",
        help="lsp-agent's prompt and tool profile (default auto; `small` for a small local model)",
    )
    parser.add_argument(
        "--lsp-infill",
        default="",
        metavar="TEMPLATE",
        help="lsp-agent's infillTemplate for the model, e.g. qwen for Qwen2.5-Coder (default: off)",
    )
    parser.add_argument(
        "--without-coverage",
        action="store_true",
        help="hide coverage.py from the agents' test environment (lsp-agent then traces spectra itself)",
    )
    parser.add_argument("--limit", type=int, help="only the first N tasks (after --tasks/--project)")
    parser.add_argument("--tasks", nargs="+", metavar="ID", help="only these task ids")
    parser.add_argument("--project", action="append", help="only tasks of these projects (repeatable)")
    parser.add_argument(
        "--out", type=Path, help="results JSON (default benchmarks/.cache/repair/results-TIME.json)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the task copies (their paths are in the results)"
    )


def select_tasks(
    tasks: list[Task], ids: list[str] | None, projects: list[str] | None, limit: int | None
) -> list[Task]:
    """The subset asked for, in task-set order; unknown ids are an error."""
    if ids:
        known = {t.id for t in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise FileNotFoundError(f"unknown task ids {unknown}; see the task file for the ids")
        tasks = [t for t in tasks if t.id in ids]
    if projects:
        tasks = [t for t in tasks if t.project in projects]
    return tasks[:limit] if limit is not None else tasks


def check_endpoint(api_base: str, api_key: str) -> None:
    """Fail early with what to do when nothing answers at the endpoint."""
    request = urllib.request.Request(
        api_base.rstrip("/") + "/models", headers={"Authorization": f"Bearer {api_key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10):
            return
    except TimeoutError:
        return  # it accepted the connection: a one-request-at-a-time server busy with another client
    except (urllib.error.URLError, OSError) as exc:
        if isinstance(getattr(exc, "reason", None), TimeoutError):
            return
        raise FileNotFoundError(
            f"no model server answers at {api_base} ({exc}); start one, e.g. "
            "`bash /work/shared/local-model/serve.sh m15 PORT`, and pass --api-base http://127.0.0.1:PORT/v1"
        ) from None


def wait_until_idle(budget: Budget, limit: float = 1800) -> float:
    """Send a one-token request and wait for its answer; returns the seconds waited.

    A server like llama.cpp's answers one request at a time and keeps working on a request whose client was
    killed at the time limit, so the next agent would pay for the previous one's last step. Not timed for either.
    """
    body = json.dumps(
        {
            "model": budget.model.split("/", 1)[-1],
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 1,
        }
    ).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {budget.api_key}"}
    url = budget.api_base.rstrip("/") + "/chat/completions"
    started = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=limit) as reply:
            reply.read()
    except (urllib.error.URLError, OSError) as exc:
        print(f"warning: the model server did not answer a one-token request ({exc}); going on", flush=True)
    return time.monotonic() - started


def run_benchmark(args: argparse.Namespace, task_path: Path) -> int:
    """Run the chosen agents on the chosen tasks; print and save the results."""
    _, tasks = read_task_set(task_path)
    tasks = select_tasks(tasks, args.tasks, args.project, args.limit)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in AGENTS]
    if unknown or not agents:
        raise FileNotFoundError(f"unknown agents {unknown}; choose from {', '.join(AGENTS)}")
    check_endpoint(args.api_base, args.api_key)
    budget = Budget(
        args.model,
        args.api_base,
        args.api_key,
        args.max_steps,
        args.time_limit,
        lsp_profile=args.lsp_profile,
        lsp_infill=args.lsp_infill,
        coverage=not args.without_coverage,
    )
    python = testenv_python()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out or CACHE / f"results-{stamp}.json"
    logs_root = CACHE / "runs" / stamp
    data: dict[str, Any] = {
        "task_file": str(task_path),
        "agents": agents,
        "budget": asdict(budget),
        "commit": lsp_agent_commit(),
        "results": [],
    }
    print(
        f"{len(tasks)} tasks x {len(agents)} agents; budget {args.max_steps} steps, {args.time_limit:.0f}s each; "
        f"lsp-agent profile {args.lsp_profile}" + (f", infill {args.lsp_infill}" if args.lsp_infill else "")
    )
    for task in tasks:
        for agent in agents:
            project = project_named(task.project)
            pristine = fetch(project)
            logs = logs_root / task.id
            waited = wait_until_idle(budget)
            if waited > 30:
                print(f"(waited {waited:.0f}s for the model server to finish earlier work)", flush=True)
            result = run_one(task, project, pristine, agent, budget, python, logs, keep=args.keep)
            data["results"].append(result)
            _save(out, data)
            print(_progress_line(result), flush=True)
    print()
    print_report(data)
    print(f"results: {out}")
    return 0


def lsp_agent_commit() -> str:
    """The checkout's commit that lsp-agent runs from, "+changes" when it has uncommitted ones."""
    git = ["git", "-C", str(Path(__file__).resolve().parents[2])]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+changes" if status.stdout.strip() else "")


def run_one(
    task: Task,
    project: Project,
    pristine: Path,
    agent: str,
    budget: Budget,
    python: Path,
    logs: Path,
    *,
    keep: bool,
) -> dict[str, Any]:
    """One agent on one task in a fresh copy of `pristine`: run, judge, and the result record."""
    logs.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"repair-{task.id}-{agent}-"))
    try:
        copy = copy_tree(pristine, scratch / project.key)
        make_buggy(copy, task)
        before = snapshot(copy)
        env = agent_environment(python, copy, project, scratch, coverage=budget.coverage)
        outcome: AgentOutcome = AGENTS[agent](task.description, copy, env, budget, logs)
        verdict = judge(task, project, copy, before, pristine, python, outcome)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    record = {
        "task": task.id,
        "project": task.project,
        "kind": task.kind,
        "split": task.split,
        **asdict(outcome),
        **asdict(verdict),
    }
    record["seconds"] = round(outcome.seconds, 1)
    record["copy"] = str(scratch / project.key) if keep else ""
    return record


def make_buggy(copy: Path, task: Task) -> None:
    """Inject the task's bug into a pristine copy."""
    path = copy / task.file
    path.write_text(buggy_source(task, path.read_text(encoding="utf-8")), encoding="utf-8")


def buggy_source(task: Task, source: str) -> str:
    """The pristine text of the task's file with its bug injected."""
    mutation = Mutation(task.file, task.line, task.kind, task.function, task.original, task.mutated)
    return mutation.apply(source)


def _progress_line(r: dict[str, Any]) -> str:
    """One line per finished run."""
    state = "repaired" if r["repaired"] else f"failed ({r['failure']})"
    return (
        f"{r['task']:<16} {r['agent']:<15} {state:<28} steps {r['steps']:>3}  {r['seconds']:>6.0f}s  "
        f"tokens {r['prompt_tokens'] + r['completion_tokens']:>7}  stop {r['stop_reason'] or '-'}"
    )


def _save(path: Path, data: dict[str, Any]) -> None:
    """Write the results so far."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
