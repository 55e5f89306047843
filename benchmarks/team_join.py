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
import filecmp
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

ORIGIN = "https://example.com/team/corpus.git"  # the git laptop's remote: the snapshot's repository name

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
    laptops: list[tuple[str, Path, bool]],
    url: str,
    work: Path,
    baseline: Path | None,
    rounds: int,
    query: str,
) -> dict:
    """--first-search: rounds of, for each laptop (name, tree, whether the baseline joins it too), its cold
    index, this checkout's join and the baseline's join, each to its first search answer."""
    runs = [
        (f"{name}_{kind}", code, tree, store)
        for name, tree, with_baseline in laptops
        for kind, code, store in (
            ("cold", REPO, ""),
            ("join", REPO, url),
            *([("baseline_join", baseline, url)] if baseline and with_baseline else []),
        )
    ]
    out: dict = {"load": []}
    for _ in range(rounds):
        for name, code, tree, store in runs:
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
        for name, _, _, _ in runs
    }
    cpu = {name: statistics.median(out[f"{name}_cpu_s"]) for name, _, _, _ in runs}
    out["usable_median_s"] = {name: round(v, 2) for name, v in usable.items()}
    out["cpu_median_s"] = {name: round(v, 2) for name, v in cpu.items()}
    out["speedup_to_first_search"], out["cpu_ratio"] = {}, {}
    for name, _, _ in laptops:
        for run in usable:
            if run.startswith(f"{name}_") and not run.endswith("_cold"):
                out["speedup_to_first_search"][run] = round(usable[f"{name}_cold"] / usable[run], 1)
                out["cpu_ratio"][run] = round(cpu[f"{name}_cold"] / cpu[run], 1)
    return out


def git_laptop(v1: Path, edited: Path, dest: Path, url: str) -> Path:
    """--make-git-laptop: v1 committed in a git repository (origin ORIGIN) and published with this checkout,
    and a clone of it at dest carrying `edited`'s differences uncommitted (the clone's path is returned)."""
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    published = dest / "published" / v1.name
    shutil.copytree(v1, published, symlinks=True)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "v1"]):
        subprocess.run([*git, "-C", str(published), *args], check=True)
    subprocess.run([*git, "-C", str(published), "remote", "add", "origin", ORIGIN], check=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(dest / "publisher-cache")}
    subprocess.run(
        [sys.executable, "-m", "lsp_agent", "index", str(published), "--store", url, "--no-progress"],
        env=env,
        cwd=REPO,
        check=True,
    )
    laptop = dest / "laptop" / v1.name
    subprocess.run(["git", "clone", "-q", str(published), str(laptop)], check=True)
    subprocess.run(["git", "-C", str(laptop), "remote", "set-url", "origin", ORIGIN], check=True)
    ours = {p.relative_to(edited) for p in edited.rglob("*") if p.is_file()}
    for rel in ours:
        if not (laptop / rel).is_file() or not filecmp.cmp(edited / rel, laptop / rel, shallow=False):
            (laptop / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(edited / rel, laptop / rel)
    for path in [p for p in laptop.rglob("*") if p.is_file() and ".git" not in p.relative_to(laptop).parts]:
        if path.relative_to(laptop) not in ours:
            path.unlink()
    return laptop


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
    parser.add_argument(
        "--laptop",
        action="append",
        required=True,
        metavar="[NAME=]DIR",
        help="a tree whose snapshot --store holds (repeat for several; NAME labels its figures)",
    )
    parser.add_argument("--store", required=True, help="the postgresql:// URL of the team index")
    parser.add_argument("--baseline", type=Path, help="a checkout whose lsp_agent joins too, for comparison")
    parser.add_argument(
        "--baseline-laptop",
        action="append",
        metavar="NAME",
        help="with --first-search, the laptops the baseline joins (default: all)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of cold, join, baseline join")
    parser.add_argument(
        "--first-search", metavar="QUERY", help="also time each index's first search of QUERY"
    )
    parser.add_argument(
        "--make-git-laptop",
        nargs=2,
        metavar=("V1", "DEST"),
        help="first commit V1 in git, publish it to --store and clone it under DEST with --laptop's edits",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="team-join-"))
    laptops = []
    for n, arg in enumerate(args.laptop, start=1):
        name, _, tree = arg.rpartition("=")
        laptops.append((name or f"laptop{n}", Path(tree).resolve()))
    if args.make_git_laptop:
        v1, dest = (Path(p).resolve() for p in args.make_git_laptop)
        print(git_laptop(v1, laptops[0][1], dest, args.store))
        return
    if args.first_search:
        chosen = set(args.baseline_laptop or [name for name, _ in laptops])
        figures = first_search_rounds(
            [(name, tree, name in chosen) for name, tree in laptops],
            args.store,
            work,
            args.baseline,
            args.rounds,
            args.first_search,
        )
    else:
        figures = alternating(laptops[0][1], args.store, work, args.baseline, args.rounds)
    print(json.dumps(figures, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
