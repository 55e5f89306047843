"""With a model: how often does one line-repair request about the bug's own line bring back the fix? (`asks`)

Line repairs succeed when the sites reach the bug's line (`sites`, model-free) and the request about that line
returns a version the tests pass with. This measures the second part alone, on every task at once: per task, the
small profile's request for the bug's line (agent/line_candidates.line_request, the task and the first failure
from a real test run in a fresh buggy copy) goes to the endpoint `--samples` times, with the seeds, temperature and
reply bound the agent uses, through the agent's own model client (litellm). A version counts as the fix when the
file it gives parses to the same tree as the project's own file. The baseline, in the same run, is the same
request without the failing test: what the model makes of the code and the task alone. With `--infill TEMPLATE`,
a third variant is the fill-in-the-middle request line repairs send first with `infillTemplate` set
(agent/repair/line_infill.py: greedy, the bug's line left out, so one request per task whatever `--samples` says).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.repair.build import Task, read_task_set
from benchmarks.repair.projects import Project, fetch, project_named, testenv_python

VARIANTS = ("with failure", "without failure", "infill")  # ours, the baseline, then infill when asked for


def add_asks_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `asks`."""
    from benchmarks.repair.sites import add_task_arguments

    add_task_arguments(parser)
    parser.add_argument("--api-base", default="http://127.0.0.1:8080/v1", help="OpenAI-compatible endpoint")
    parser.add_argument("--model", default="openai/local", help="litellm model string (default openai/local)")
    parser.add_argument(
        "--api-key", default="sk-local", help="API key for the endpoint (a local one needs none)"
    )
    parser.add_argument("--samples", type=int, default=2, help="requests per task and variant (seeds 1..N)")
    parser.add_argument(
        "--infill",
        default="",
        help="also the infill request with this infillTemplate, e.g. qwen (default: off)",
    )
    parser.add_argument("--out", type=Path, help="results JSON (default: none)")


def fixes(task: Task, pristine: str, lines: list[str], reply: str, shown: list[str]) -> tuple[int, bool]:
    """(versions read from the reply, whether one of them turns the buggy `lines` back into the project's own
    file)."""
    from lsp_agent.agent.repair.line_candidates import candidate_lines

    want = ast.dump(ast.parse(pristine))
    versions = candidate_lines(reply, lines[task.line - 1], shown)
    for version in versions:
        text = "\n".join([*lines[: task.line - 1], version, *lines[task.line :]])
        try:
            if ast.dump(ast.parse(text)) == want:
                return len(versions), True
        except SyntaxError:
            continue
    return len(versions), False


def requests(task: Task, failure: str, lines: list[str]) -> dict[str, str]:
    """The request of each variant for the bug's line of the buggy file's `lines`."""
    from lsp_agent.agent.repair.line_candidates import line_request

    ours = line_request(task.description, failure, task.file, lines, task.line)
    baseline = line_request(task.description, "", task.file, lines, task.line).replace(
        "The failing test:\n\n\n", ""
    )
    return dict(zip(VARIANTS[:2], (ours, baseline), strict=True))


def shown_lines(task: Task, lines: list[str]) -> list[str]:
    """The lines the request shows around the bug's line, not counting it (echoes are not versions)."""
    from lsp_agent.agent.repair.line_candidates import shown_numbers

    return [lines[n - 1] for n in shown_numbers(lines, task.line) if n != task.line]


async def ask_infill(client: Any, template: str, lines: list[str], number: int) -> tuple[str, float, int]:
    """The infill request about line `number` as line repairs send it: (the line filled in, seconds, tokens)."""
    from lsp_agent.agent.repair.line_infill import MAX_TOKENS, STOP, filled_line, infill_prompt

    client.extra_params.update(max_tokens=MAX_TOKENS, temperature=0, seed=1)
    reply = await client.infill(infill_prompt(template, lines, number), STOP)
    return filled_line(reply.content or ""), reply.seconds, reply.completion_tokens


async def ask(client: Any, request: str, seed: int) -> tuple[str, float, int]:
    """One line-repair request as the agent sends it: (reply text, seconds, completion tokens)."""
    from lsp_agent.agent.repair.line_repair import REPLY_TOKENS, SYSTEM, TEMPERATURE

    client.extra_params.update(max_tokens=REPLY_TOKENS, temperature=TEMPERATURE, seed=seed)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request}]
    reply = await client.complete(messages, None)
    return reply.content or "", reply.seconds, reply.completion_tokens


def run_asks(args: argparse.Namespace, task_path: Path) -> int:
    """Ask about each chosen task's bug line with and without the failure; print how often a version fixes it."""
    from benchmarks.repair.run import check_endpoint, select_tasks
    from benchmarks.repair.sites import BUDGET_STEPS
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.agent.repair.line_sites import site_budget
    from lsp_agent.config import Settings

    _, tasks = read_task_set(task_path)
    tasks = select_tasks(tasks, args.tasks, args.project, args.limit)
    check_endpoint(args.api_base, args.api_key)
    client = ModelClient(
        Settings(model=args.model, api_base=args.api_base, api_key=args.api_key), stream=True
    )
    python = testenv_python()
    budget = site_budget(Settings().repair_lines, BUDGET_STEPS)
    results: list[dict[str, Any]] = []

    async def ask_all() -> None:  # one event loop for the model client's connections
        for task in tasks:
            project = project_named(task.project)
            results.extend(
                await ask_task(
                    task, project, fetch(project), python, client, args.samples, budget, args.infill
                )
            )
            print(_task_line(task, results), flush=True)

    asyncio.run(ask_all())
    print()
    print(asks_table(results, args.samples))
    if args.out:
        args.out.write_text(json.dumps({"samples": args.samples, "results": results}, indent=1) + "\n")
        print(f"results: {args.out}")
    return 0


async def ask_task(
    task: Task,
    project: Project,
    tree: Path,
    python: Path,
    client: Any,
    samples: int,
    budget: int,
    infill: str = "",
) -> list[dict[str, Any]]:
    """One task: its first failure from a real test run (and the site rank), then `samples` requests per
    variant (one infill request, when `infill` names a template); a record per request."""
    from benchmarks.repair.run import buggy_source
    from benchmarks.repair.sites import rank_task

    pristine = (tree / task.file).read_text(encoding="utf-8")
    lines = buggy_source(task, pristine).splitlines()
    ranks = rank_task(task, project, tree, python, budget)
    shown = shown_lines(task, lines)
    asked = [  # each request is made when its turn comes
        (variant, seed, partial(ask, client, request, seed))
        for variant, request in requests(task, ranks["failure"], lines).items()
        for seed in range(1, samples + 1)
    ]
    if infill:
        asked.append((VARIANTS[2], 1, partial(ask_infill, client, infill, lines, task.line)))
    records = []
    for variant, seed, request in asked:
        reply, seconds, tokens = await request()
        count, fixed = fixes(task, pristine, lines, reply, shown)
        records.append(
            {
                "task": task.id,
                "kind": task.kind,
                "variant": variant,
                "seed": seed,
                "site": ranks["sites"],
                "versions": count,
                "fixed": fixed,
                "seconds": round(seconds, 1),
                "tokens": tokens,
                "reply": reply,
            }
        )
    return records


def asks_table(results: list[dict[str, Any]], samples: int) -> str:
    """Per variant: requests that brought the fix, tasks fixed by any sample, versions and seconds per request."""
    tasks = len({r["task"] for r in results})
    rows = [
        f"{'variant':<16} {'asks fixed':>11} {'tasks fixed':>12} {'site & fixed':>12} {'versions/ask':>12} "
        f"{'secs/ask':>8}"
    ]
    fixed_counts = {}
    for variant in VARIANTS:
        mine = [r for r in results if r["variant"] == variant]
        if not mine:
            continue
        asks_fixed = sum(r["fixed"] for r in mine)
        tasks_fixed = len({r["task"] for r in mine if r["fixed"]})
        reached = len({r["task"] for r in mine if r["fixed"] and r["site"] is not None})  # a site, fixed
        fixed_counts[variant] = asks_fixed
        rows.append(
            f"{variant:<16} {asks_fixed:>5}/{len(mine):<5} {tasks_fixed:>6}/{tasks:<5} {reached:>6}/{tasks:<5} "
            f"{sum(r['versions'] for r in mine) / len(mine):>12.1f} "
            f"{sum(r['seconds'] for r in mine) / len(mine):>8.1f}"
        )
    ours, baseline, infill = (fixed_counts.get(v, 0) for v in VARIANTS)
    rows.append(
        f"ratio asks fixed, {VARIANTS[0]} / {VARIANTS[1]}: {_ratio(ours, baseline)} ({samples} sample(s) per task)"
    )
    if VARIANTS[2] in fixed_counts:
        rows.append(f"ratio asks fixed, {VARIANTS[2]} (1 request) / {VARIANTS[0]}: {_ratio(infill, ours)}")
    return "\n".join(rows)


def _ratio(a: int, b: int) -> str:
    """a / b as a ratio, or what stands for it when b is 0."""
    return f"{a / b:.2f}x" if b else ("inf" if a else "n/a")


def _task_line(task: Task, results: list[dict[str, Any]]) -> str:
    """One progress line per task: the fixed samples per variant."""
    mine = [r for r in results if r["task"] == task.id]
    parts = [
        f"{variant} {sum(r['fixed'] for r in mine if r['variant'] == variant)}/"
        f"{sum(1 for r in mine if r['variant'] == variant)}"
        for variant in VARIANTS
        if any(r["variant"] == variant for r in mine)
    ]
    return f"{task.id:<16} {task.kind:<20} " + "  ".join(parts) + f"  ({time.strftime('%H:%M:%S')})"
