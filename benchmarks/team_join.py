"""The laptop join against a cold local index, alternating, on a tree whose snapshot a team index holds.

For the join's ratio where a full team_index.py run is too long to repeat.

    python benchmarks/team_join.py --laptop DIR --store postgresql://... [--baseline CHECKOUT] [--rounds 2]

DIR is a working copy whose snapshot (or most of it) the store holds (team_index.py builds one: its v1 corpus
published with `lsp-agent index --store`, and a copy with 50 files edited). Each round times, in child processes
(driver import included), a cold local index of DIR, the join of this checkout and (with --baseline, e.g.
`git archive` of main) the baseline's join, noting the 1-minute load average before each. With --first-search,
each child also times its index's first search (BM25 is built then, as after any fresh index): the index is
usable once that answers; CPU seconds of each child (and its worker processes) are noted too. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from team_index import REPO, join_in  # noqa: E402

FIRST_SEARCH = (  # refresh then one search, timed apart in a child: argv tree, store URL or "", database, query
    "import sys, time; from pathlib import Path; from lsp_agent.index import IndexConfig, WorkspaceIndex; "
    "i = WorkspaceIndex(Path(sys.argv[1]), IndexConfig(store=sys.argv[2] or None), db_path=Path(sys.argv[3])); "
    "t = time.perf_counter(); i.refresh(); r = time.perf_counter() - t; "
    "t = time.perf_counter(); i.search(sys.argv[4]); print(r, time.perf_counter() - t); i.close()"
)

COLD = (  # one cold local index timed in a child process: argv tree, database
    "import sys, time; from pathlib import Path; from lsp_agent.index import IndexConfig, WorkspaceIndex; "
    "i = WorkspaceIndex(Path(sys.argv[1]), IndexConfig(), db_path=Path(sys.argv[2])); "
    "t = time.perf_counter(); i.refresh(); print(time.perf_counter() - t); i.close()"
)


def cold_in(tree: Path, db: Path) -> float:
    """Seconds of a cold local index of `tree` (no team index) in a child process."""
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(db.parent / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", COLD, str(tree), str(db)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


def with_search_in(code: Path, tree: Path, url: str, db: Path, query: str) -> tuple[float, float, float]:
    """(refresh seconds, first search seconds, CPU seconds of the child and its workers, start-up included) of
    a fresh index of `tree` (cold when `url` is "") in a child; PostgreSQL's own CPU is not counted."""
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(db.parent / "cache")}
    argv = [sys.executable, "-c", FIRST_SEARCH, str(tree), url, str(db), query]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # cwd too: `python -c` puts the working directory ahead of PYTHONPATH, which ran the baseline on this code
    done = subprocess.run(argv, env=env, cwd=code, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    refresh, search = done.stdout.split()[-2:]
    return float(refresh), float(search), cpu


def first_search_rounds(
    tree: Path, url: str, work: Path, baseline: Path | None, rounds: int, query: str
) -> dict:
    """--first-search: rounds of (cold, join, baseline's join), each to its first search answer."""
    runs = [
        ("cold", REPO, ""),
        ("join", REPO, url),
        *([("baseline_join", baseline, url)] if baseline else []),
    ]
    out: dict = {"load": []}
    for _ in range(rounds):
        for name, code, store in runs:
            out["load"].append(load())
            refresh, search, cpu = with_search_in(code, tree, store, work / f"{name}.sqlite3", query)
            out.setdefault(f"{name}_refresh_s", []).append(round(refresh, 2))
            out.setdefault(f"{name}_first_search_s", []).append(round(search, 2))
            out.setdefault(f"{name}_cpu_s", []).append(round(cpu, 2))
        print(json.dumps(out), file=sys.stderr, flush=True)
    usable = {
        name: statistics.median(
            a + b for a, b in zip(out[f"{name}_refresh_s"], out[f"{name}_first_search_s"], strict=True)
        )
        for name, _, _ in runs
    }
    out["usable_median_s"] = {name: round(v, 2) for name, v in usable.items()}
    out["speedup_to_first_search"] = {
        n: round(usable["cold"] / v, 1) for n, v in usable.items() if n != "cold"
    }
    cpu = {name: statistics.median(out[f"{name}_cpu_s"]) for name, _, _ in runs}
    out["cpu_median_s"] = {name: round(v, 2) for name, v in cpu.items()}
    out["cpu_ratio"] = {n: round(cpu["cold"] / v, 1) for n, v in cpu.items() if n != "cold"}
    return out


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 1)


def alternating(tree: Path, url: str, work: Path, baseline: Path | None, rounds: int) -> dict:
    """--laptop: `rounds` of (cold local index, join, baseline's join) in child processes, load noted each."""
    out: dict = {"cold_local_s": [], "join_s": [], "baseline_join_s": [], "load": []}
    for _ in range(rounds):
        out["load"].append(load())
        out["cold_local_s"].append(round(cold_in(tree, work / "cold.sqlite3"), 2))
        out["load"].append(load())
        out["join_s"].append(round(join_in(REPO, tree, url, work / "join-this.sqlite3"), 2))
        if baseline is not None:
            out["load"].append(load())
            out["baseline_join_s"].append(round(join_in(baseline, tree, url, work / "join-base.sqlite3"), 2))
        print(json.dumps(out), file=sys.stderr, flush=True)
    cold = statistics.median(out["cold_local_s"])
    out["speedup_median"] = round(cold / statistics.median(out["join_s"]), 1)
    if baseline is not None:
        out["baseline_speedup_median"] = round(cold / statistics.median(out["baseline_join_s"]), 1)
    return out


def main() -> None:
    """Alternate and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--laptop", type=Path, required=True, help="a tree whose snapshot --store holds")
    parser.add_argument("--store", required=True, help="the postgresql:// URL of the team index")
    parser.add_argument("--baseline", type=Path, help="a checkout whose lsp_agent joins too, for comparison")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of cold, join, baseline join")
    parser.add_argument(
        "--first-search", metavar="QUERY", help="also time each index's first search of QUERY"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="team-join-"))
    if args.first_search:
        figures = first_search_rounds(
            args.laptop.resolve(), args.store, work, args.baseline, args.rounds, args.first_search
        )
    else:
        figures = alternating(args.laptop.resolve(), args.store, work, args.baseline, args.rounds)
    print(json.dumps(figures, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
