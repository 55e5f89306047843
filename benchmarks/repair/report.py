"""Tables: the task set's statistics after `build`, and per-agent results with the lsp-agent/baseline ratio."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.repair.multiline import MULTI_KINDS
from benchmarks.repair.mutations import KINDS

FAILURE_CLASSES = (
    "timeout",
    "iteration_limit",
    "format_errors",
    "no_edit",
    "broke_other_tests",
    "wrong_edit",
)


def print_build_stats(tasks: list[Any], stats: list[Any]) -> None:
    """Tasks per project and per mutation kind, candidates and why candidates were dropped."""
    print(f"{'project':<12} {'cov':<8} {'candidates':>10} {'tried':>6} {'kept':>5}  dropped")
    for s in stats:
        dropped = ", ".join(f"{k} {v}" for k, v in s.dropped.items()) or "-"
        print(
            f"{s.project:<12} {s.coverage:<8} {sum(s.candidates.values()):>10} {s.tried:>6} "
            f"{sum(s.kept.values()):>5}  {dropped}"
        )
    kinds = Counter(t.kind for t in tasks)
    candidates: Counter[str] = Counter()
    for s in stats:
        candidates.update(s.candidates)
    listed = [k for k in (*KINDS, *MULTI_KINDS) if k in kinds or k in candidates] or list(KINDS)
    print("tasks per kind: " + ", ".join(f"{k} {kinds.get(k, 0)}" for k in listed))
    print("candidates per kind: " + ", ".join(f"{k} {candidates.get(k, 0)}" for k in listed))
    splits = Counter(t.split for t in tasks if getattr(t, "split", ""))
    if splits:
        print("split: " + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())))
    total_dropped: Counter[str] = Counter()
    for s in stats:
        total_dropped.update(s.dropped)
    print(f"total: {len(tasks)} tasks from {len(stats)} projects; dropped: {dict(total_dropped) or 'none'}")


def summarize(results: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    """Figures of one agent: repaired count and rate, medians of steps and seconds, tokens, failure classes."""
    mine = [r for r in results if r["agent"] == agent]
    repaired = [r for r in mine if r["repaired"]]
    failures = Counter(r["failure"] for r in mine if not r["repaired"])
    return {
        "agent": agent,
        "tasks": len(mine),
        "repaired": len(repaired),
        "rate": len(repaired) / len(mine) if mine else 0.0,
        "median_steps": statistics.median(r["steps"] for r in mine) if mine else 0,
        "median_seconds": statistics.median(r["seconds"] for r in mine) if mine else 0.0,
        "median_seconds_repaired": statistics.median(r["seconds"] for r in repaired) if repaired else None,
        "tokens": sum(r["prompt_tokens"] + r["completion_tokens"] for r in mine),
        "exact_fixes": sum(1 for r in mine if r.get("exact_fix")),
        "failures": {c: failures[c] for c in FAILURE_CLASSES if failures.get(c)},
    }


def print_report(data: dict[str, Any]) -> None:
    """One row per task, a table per agent and the ratio lsp-agent / mini-swe-agent."""
    results = data["results"]
    print(f"{'task':<16} {'agent':<15} {'ok':<3} {'steps':>5} {'secs':>6} {'tokens':>7}  failure")
    for r in results:
        tokens = r["prompt_tokens"] + r["completion_tokens"]
        failure = "" if r["repaired"] else r["failure"]
        print(
            f"{r['task']:<16} {r['agent']:<15} {'yes' if r['repaired'] else 'no':<3} {r['steps']:>5} "
            f"{r['seconds']:>6.0f} {tokens:>7}  {failure}"
        )
    print()
    summaries = [summarize(results, agent) for agent in data["agents"]]
    print(
        f"{'agent':<15} {'repaired':>8} {'rate':>6} {'med steps':>9} {'med secs':>8} {'tokens':>8}  failures"
    )
    for s in summaries:
        failures = ", ".join(f"{k} {v}" for k, v in s["failures"].items()) or "-"
        print(
            f"{s['agent']:<15} {s['repaired']:>4}/{s['tasks']:<3} {s['rate']:>6.0%} {s['median_steps']:>9} "
            f"{s['median_seconds']:>8.0f} {s['tokens']:>8}  {failures}"
        )
    if {"lsp-agent", "mini-swe-agent"} <= set(data["agents"]):
        print(paired_ratio_line(results))
    for line in by_kind_lines(results, data["agents"]):
        print(line)
    for source in data.get("sources", []):
        at = f", lsp-agent at {source['commit']}" if "lsp-agent" in source["agents"] else ""
        print(f"from {source['path']}: {source['runs']} runs of {', '.join(source['agents'])}{at}")


def by_kind_lines(results: list[dict[str, Any]], agents: list[str]) -> list[str]:
    """Repaired per kind of bug and agent, and per split when the tasks have one (dev, held_out)."""
    groups = [("kind", k) for k in sorted({r.get("kind") or "" for r in results} - {""})]
    groups += [("split", k) for k in sorted({r.get("split") or "" for r in results} - {""})]
    if not groups:  # results recorded before tasks had kinds
        return []
    lines = ["", f"{'kind':<24} " + " ".join(f"{agent:>15}" for agent in agents)]
    for field, value in groups:
        cells = []
        for agent in agents:
            mine = [r for r in results if r["agent"] == agent and (r.get(field) or "") == value]
            cells.append(f"{sum(r['repaired'] for r in mine)}/{len(mine)}" if mine else "-")
        label = value if field == "kind" else f"split {value}"
        lines.append(f"{label:<24} " + " ".join(f"{cell:>15}" for cell in cells))
    return lines


def paired_ratio_line(results: list[dict[str, Any]]) -> str:
    """The ratio over the tasks both agents ran (pooled files may give one agent more tasks)."""
    both = {r["task"] for r in results if r["agent"] == "lsp-agent"} & {
        r["task"] for r in results if r["agent"] == "mini-swe-agent"
    }
    paired = [r for r in results if r["task"] in both]
    line = ratio_line(summarize(paired, "lsp-agent"), summarize(paired, "mini-swe-agent"))
    if len(paired) < len(results):
        line += f" on the {len(both)} tasks both ran"
    return line


def ratio_line(ours: dict[str, Any], baseline: dict[str, Any]) -> str:
    """The repaired ratio lsp-agent / mini-swe-agent (says so when the baseline repaired none)."""
    if baseline["repaired"]:
        value = f"{ours['repaired'] / baseline['repaired']:.2f}x"
    elif ours["repaired"]:
        value = "inf (the baseline repaired none)"
    else:
        value = "n/a (neither repaired any)"
    return (
        f"ratio repaired lsp-agent / mini-swe-agent: {value} "
        f"({ours['repaired']}/{ours['tasks']} vs {baseline['repaired']}/{baseline['tasks']})"
    )


def read_results(path: Path) -> dict[str, Any]:
    """A results file written by `run`."""
    if not path.is_file():
        raise FileNotFoundError(f"no results file at {path}")
    return json.loads(path.read_text(encoding="utf-8"))


POOLED_BUDGET = ("model", "max_steps", "time_limit")  # what pooled results files must share


def pool_results(paths: list[Path]) -> dict[str, Any]:
    """Several results files as one (runs of other samples of one task set on one budget); ValueError when the
    task sets, budgets or lsp-agent's profiles differ or one agent ran a task twice."""
    files = [(path, read_results(path)) for path in paths]
    first_path, first = files[0]
    profiles = {data["budget"].get("lsp_profile") for _, data in files if "lsp-agent" in data["agents"]}
    if len(profiles) > 1:
        raise ValueError(f"lsp-agent ran with the profiles {', '.join(map(str, sorted(profiles)))}")
    infills = {data["budget"].get("lsp_infill") or "" for _, data in files if "lsp-agent" in data["agents"]}
    if len(infills) > 1:
        raise ValueError(
            f"lsp-agent ran with the infill templates {', '.join(repr(t) for t in sorted(infills))}"
        )
    budget = {
        **first["budget"],
        "lsp_profile": profiles.pop() if profiles else first["budget"].get("lsp_profile"),
    }
    pooled: dict[str, Any] = {**first, "budget": budget, "agents": [], "results": [], "sources": []}
    where: dict[tuple[str, str], Path] = {}
    for path, data in files:
        if Path(data["task_file"]).name != Path(first["task_file"]).name:
            raise ValueError(
                f"{path} ran the tasks of {data['task_file']}, {first_path} those of {first['task_file']}"
            )
        for key in POOLED_BUDGET:
            if data["budget"].get(key) != first["budget"].get(key):
                raise ValueError(
                    f"{path} ran with {key} {data['budget'].get(key)}, {first_path} with {first['budget'].get(key)}"
                )
        for r in data["results"]:
            if (r["task"], r["agent"]) in where:
                raise ValueError(
                    f"{r['agent']} ran {r['task']} in both {where[r['task'], r['agent']]} and {path}; "
                    "pool each task and agent once"
                )
            where[r["task"], r["agent"]] = path
        pooled["results"] += data["results"]
        pooled["agents"] += [a for a in data["agents"] if a not in pooled["agents"]]
        pooled["sources"].append(
            {
                "path": str(path),
                "runs": len(data["results"]),
                "agents": data["agents"],
                "commit": data.get("commit", "unknown"),
            }
        )
    return pooled
