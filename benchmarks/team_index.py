"""The team index (PostgreSQL + pgvector) against the local SQLite index: cold index, second commit, laptop join,
query latency.

    python benchmarks/team_index.py [--source DIR | --registry] [--max-files N] [--store postgresql://...]
        [--changed 50] [--join-only | --commits-only] [--no-latency] [--baseline DIR]

The corpus is the Python (and other indexable) source under DIR (default: this interpreter's site-packages),
first N files in path order. Version 2 of the corpus edits every 10th file, adds 2% new files and deletes 1%
(a later release). --registry: the pinned PyPI sdists and npm packages of registry_corpus.py (Python,
TypeScript, JavaScript), version 2 their next releases. --join-only publishes v1 and measures the join (and
the query latencies from 1 and 8 client processes, unless --no-latency); --baseline DIR also times the join
with the lsp_agent of another checkout (e.g. `git archive` of an older commit), alternating with this one.
--commits-only: two indexers of v1 at once, then v2 into the same database, and a cold SQLite index of v2.
Without --store a private PostgreSQL with pgvector is started with the pgserver wheel. Prints one JSON object
of figures (long runs also show each on stderr as it comes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import registry_corpus  # noqa: E402
import team_clients  # noqa: E402

from lsp_agent.index import IndexConfig, WorkspaceIndex  # noqa: E402

EXTENSIONS = {".py", ".pyi", ".js", ".ts", ".c", ".h", ".rs", ".go", ".java", ".rb", ".lua", ".md", ".txt"}
EXTENSIONS |= {".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".cc", ".cpp", ".hpp"}
JOIN = (  # one join timed in a child process: argv tree, store URL, database
    "import sys, time; from pathlib import Path; from lsp_agent.index import IndexConfig, WorkspaceIndex; "
    "i = WorkspaceIndex(Path(sys.argv[1]), IndexConfig(store=sys.argv[2]), db_path=Path(sys.argv[3])); "
    "t = time.perf_counter(); i.refresh(); print(time.perf_counter() - t); i.close()"
)
QUERIES = [
    "parse the configuration file",
    "retry the http request on timeout",
    "def __init__",
    "json decode error",
    "read bytes from a stream",
    "validate the url scheme",
    "thread pool executor shutdown",
    "cache the result of a function",
    "convert a datetime to a timestamp",
    "raise ValueError when the argument is negative",
]


def build_corpus(source: Path, dest: Path, max_files: int) -> tuple[int, int]:
    """Copy the first `max_files` indexable files under `source` to `dest`; (files, lines)."""
    files = lines = 0
    for path in sorted(source.rglob("*")):
        if files >= max_files:
            break
        if path.suffix not in EXTENSIONS or not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            if path.stat().st_size > 200_000:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files += 1
        lines += data.count(b"\n")
    return files, lines


def next_release(v1: Path, v2: Path) -> None:
    """v2: v1 with every 10th file edited, 2% new files and 1% deleted."""
    shutil.copytree(v1, v2)
    paths = sorted(p for p in v2.rglob("*") if p.is_file())
    for n, path in enumerate(paths):
        if n % 100 == 7:
            path.unlink()
        elif n % 10 == 3:
            path.write_text(
                path.read_text(errors="replace")
                + f"\n\ndef release_two_helper_{n}(value):\n    return value\n"
            )
        elif n % 50 == 5:
            (path.parent / f"added_{n}.py").write_text(
                f"def added_in_release_two_{n}(x):\n    return x * {n}\n"
            )


def laptop(v1: Path, dest: Path, changed: int) -> None:
    """A working copy of v1 with `changed` files edited."""
    shutil.copytree(v1, dest)
    paths = sorted(p for p in dest.rglob("*.py") if p.is_file())
    step = max(1, len(paths) // max(changed, 1))
    for path in paths[::step][:changed]:
        path.write_text(
            path.read_text(errors="replace") + "\n\ndef local_uncommitted_change():\n    return 1\n"
        )


def cli(args: list[str], cache: Path) -> float:
    """Seconds one `lsp-agent` command took (it must succeed)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args, "--no-progress"], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"lsp-agent {args[0]} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def two_indexers(tree: Path, url: str, work: Path) -> float:
    """Wall seconds of two `lsp-agent index --store` processes on the same commit at once."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "index", str(tree), "--store", url, "--no-progress"],
            env={**env, "XDG_CACHE_HOME": str(work / f"ci{n}")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for run in runs:
        out, err = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"indexer failed: {err[-2000:]}")
    return time.perf_counter() - started


def reuse_of(url: str, tree: Path, work: Path) -> dict:
    """Index a tree into the team index and parse its report of what was already stored."""
    env = {**os.environ, "XDG_CACHE_HOME": str(work), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "index", str(tree), "--store", url, "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - started
    line = next(ln for ln in done.stdout.splitlines() if "snapshot" in ln)
    files, stored = line.split("(")[1].split(" files, ")
    return {
        "seconds": round(seconds, 2),
        "files": int(files),
        "reused_files": int(stored.split()[0]),
        "parsed_line": done.stdout.splitlines()[0],
    }


def storage(url: str) -> dict:
    """Rows and bytes (tables with their indexes) of the team index."""
    import psycopg

    out = {}
    with psycopg.connect(url) as conn:
        for table in (
            "lsp_files",
            "lsp_chunks",
            "lsp_symbols",
            "lsp_vectors",
            "lsp_snapshot_files",
            "lsp_snapshot_parts",
        ):
            count, size = conn.execute(
                f"SELECT count(*), pg_total_relation_size('{table}') FROM {table}"  # noqa: S608
            ).fetchone()  # type: ignore[misc]
            out[table] = {"rows": count, "mb": round(size / 1e6, 1)}
    return out


def timed_refresh(tree: Path, config: IndexConfig, db: Path) -> tuple[float, WorkspaceIndex]:
    """Seconds to a usable index (refresh) of a tree into a fresh database; the open index."""
    index = WorkspaceIndex(tree, config, db_path=db)
    started = time.perf_counter()
    index.refresh()
    return time.perf_counter() - started, index


def join_in(code: Path, tree: Path, url: str, db: Path) -> float:
    """Seconds of a laptop join (refresh of a fresh local index over the team index) with the lsp_agent in `code`."""
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(db.parent / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", JOIN, str(tree), url, str(db)],
        env=env,
        cwd=code,  # `python -c` puts the working directory ahead of PYTHONPATH
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


def join_rounds(tree: Path, url: str, work: Path, baseline: Path | None, rounds: int = 2) -> dict:
    """Join times of this checkout (and of `baseline`), alternating which goes first."""
    times: dict[str, list[float]] = {"this": [], "baseline": []}
    codes = [("this", REPO), *([("baseline", baseline)] if baseline is not None else [])]
    for n in range(rounds):
        for name, code in (
            codes[::-1] if n % 2 == 0 else codes
        ):  # each goes first once (the first meets a busier
            times[name].append(join_in(code, tree, url, work / f"join-{name}.sqlite3"))  # database)
    return {k: [round(t, 2) for t in v] for k, v in times.items() if v}


def same_up_to_ties(a: list, b: list) -> bool:
    """The same scores rank by rank and the same hits above the last score (hits tied at the cut may differ).

    Chunk ids break BM25 ties; a laptop's changed files get their ids after the seeded ones, a cold index in walk
    order, so equal scores may come in another order.
    """
    if [h.score for h in a] != [h.score for h in b]:
        return False
    low = a[-1].score if a else 0.0
    key = sorted((-h.score, h.path, h.start) for h in a if h.score > low)
    return key == sorted((-h.score, h.path, h.start) for h in b if h.score > low)


def note(figures: dict, key: str, value: object) -> None:
    """Record a figure and show it at once on stderr (long runs: a figure is not lost to a later failure)."""
    figures[key] = value
    print(json.dumps({key: value}), file=sys.stderr, flush=True)


def commits(url: str, v1: Path, v2: Path, work: Path, figures: dict, only: bool = False) -> None:
    """Cold indexes (SQLite, PostgreSQL by one and by two indexers) and the second commit into PostgreSQL.

    `only` (--commits-only): no cold SQLite or one-indexer run of v1 (the join run has them); the second commit
    goes into the two indexers' database.
    """
    if not only:
        note(figures, "cold_sqlite_s", round(cli(["index", str(v1)], work / "sqlite"), 2))
        note(figures, "cold_postgres_one_indexer_s", reuse_of(url + "", v1, work / "pg-one")["seconds"])
    second = url.replace("/postgres?", "/bench_two?") if "/postgres?" in url else None
    if second:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS bench_two WITH (FORCE)")
            conn.execute("CREATE DATABASE bench_two")
        note(figures, "cold_postgres_two_indexers_at_once_s", round(two_indexers(v1, second, work), 2))
    target = second if only and second else url
    note(figures, "second_commit", reuse_of(target, v2, work / "pg-v2"))
    note(figures, "postgres_after_two_commits", storage(target))
    note(figures, "second_commit_cold_sqlite_s", round(cli(["index", str(v2)], work / "sqlite-v2"), 2))


def join(url: str, v1: Path, work: Path, args: argparse.Namespace, figures: dict) -> None:
    """The laptop join (child processes, driver import included) against a cold local index timed between two
    joins, rankings from both, query latencies from 1 and 8 concurrent client processes."""
    mine = work / "laptop" / "corpus"
    laptop(v1, mine, args.changed)
    db = work / "join.sqlite3"
    joins = [join_in(REPO, mine, url, db)]
    cold_s, local = timed_refresh(mine, IndexConfig(), work / "cold.sqlite3")
    joins.append(join_in(REPO, mine, url, db))
    figures["laptop_join"] = {
        "changed": args.changed,
        "join_s": [round(t, 2) for t in joins],
        "cold_local_s": round(cold_s, 2),
        "speedup": round(cold_s / statistics.mean(joins), 1),
        "speedup_best_join": round(cold_s / min(joins), 1),
    }
    if args.baseline:
        rounds = join_rounds(mine, url, work, args.baseline)
        figures["laptop_join"]["baseline_joins_s"] = rounds["baseline"]
        figures["laptop_join"]["baseline_speedup_best_join"] = round(cold_s / min(rounds["baseline"]), 1)
        joins = [join_in(REPO, mine, url, db)]  # the baseline's database is another file: ours again
    joined = WorkspaceIndex(mine, IndexConfig(store=url), db_path=db)
    pairs = [(joined.search(q, 10), local.search(q, 10)) for q in QUERIES]
    figures["rankings"] = {
        "queries": len(QUERIES),
        "identical": sum(a == b for a, b in pairs),
        "identical_up_to_tie_order": sum(same_up_to_ties(a, b) for a, b in pairs),
    }
    joined.close()
    local.close()
    if not args.no_latency:
        for name, store, path in (
            ("query_postgres_join", url, db),
            ("query_sqlite", "sqlite", work / "cold.sqlite3"),
        ):
            figures[name] = {n: team_clients.concurrent(mine, path, store, n, QUERIES, work) for n in (1, 8)}


def main() -> None:
    """Run every measurement and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--registry", action="store_true", help="the registry corpus (registry_corpus.py)")
    parser.add_argument("--max-files", type=int, default=3000)
    parser.add_argument("--store", help="a postgresql:// URL (default: a private pgserver)")
    parser.add_argument("--changed", type=int, default=50)
    parser.add_argument("--join-only", action="store_true", help="publish v1, then measure the laptop join")
    parser.add_argument("--commits-only", action="store_true", help="two indexers and the second commit only")
    parser.add_argument("--no-latency", action="store_true", help="skip the query latencies")
    parser.add_argument("--baseline", type=Path, help="a checkout whose lsp_agent joins too, for comparison")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="team-bench-"))
    work.chmod(0o755)
    url = args.store
    if url is None:
        import pgserver

        server = pgserver.get_server(work / "pg", cleanup_mode="stop")
        url = server.get_uri()
    sources: tuple[Path, Path | None] = (args.source, None)
    if args.registry:
        cache = registry_corpus.CACHE / "registry"
        sources = (
            registry_corpus.fetch(cache, 1),
            None if args.join_only else registry_corpus.fetch(cache, 2),
        )
    v1, v2 = work / "v1" / "corpus", work / "v2" / "corpus"
    files, lines = build_corpus(sources[0], v1, args.max_files)
    figures: dict = {"corpus": {"source": str(sources[0]), "files": files, "lines": lines}}
    if args.join_only:
        figures["cold_postgres_one_indexer_s"] = reuse_of(url, v1, work / "pg-one")["seconds"]
    else:
        if sources[1] is not None:
            v2_size = build_corpus(sources[1], v2, args.max_files)
            figures["corpus_v2"] = {"files": v2_size[0], "lines": v2_size[1]}
        else:
            next_release(v1, v2)
        commits(url, v1, v2, work, figures, args.commits_only)
    if not args.commits_only:
        join(url, v1, work, args, figures)
    print(json.dumps(figures, indent=2))
    if args.store is None:
        server.cleanup()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
