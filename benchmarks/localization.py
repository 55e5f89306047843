"""File localization from real issue reports: does the index put the file a fix changed among its first k files?

    python benchmarks/localization.py [--data FILE] [--mirrors DIR] [--repo django] [--limit 40] [--embeddings local]
    python benchmarks/localization.py --folds   # leave one repository out (localization_folds.md)

Data: one JSON object a line (id, repo, base_commit, query = the issue text, gold = the non-test .py files the
fix changed); by default /work/shared/bench/swe-lite-localization-dev.jsonl (160 SWE-bench Lite instances from
django, scikit-learn and matplotlib), or LSP_AGENT_LOCALIZATION_DATA. Source trees come from git mirrors when
given (--mirrors or LSP_AGENT_MIRRORS: a folder of `<owner>+<name>` git directories, as the search tool's fetch
leaves them), else from the nearest earlier release on PyPI (see localization_corpus.py); cached under
benchmarks/.cache/localization/, as are the indexes (delete them to measure index time again).

Systems, measured in one run on the same trees: BM25 over whole files with the index's own tokenizer (the
baseline), `WorkspaceIndex.search` read as files in order of first appearance (what `lsp-agent search` shows),
and `WorkspaceIndex.locate` (the file ranking). Metrics per repository and overall: acc@k (every gold file among
the first k distinct files), MRR, p50/p95 query latency (after one warm-up query per tree), index seconds.
Instances whose gold file is absent from the tree are reported and left out of the metrics. --ablations adds
locate with each of its parts turned off, to show what each adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from localization_corpus import CACHE, Corpus, corpus_for, default_mirrors  # noqa: E402
from localization_dense import (  # noqa: E402
    QueryMemo,
    dense_systems,
    embedding_plan,
    open_dense_index,
    search_files,
)

DEFAULT_DATA = Path("/work/shared/bench/swe-lite-localization-dev.jsonl")
KS = (1, 3, 5, 10)
Ranker = Callable[[str], list[str]]


class WholeFileBM25:
    """BM25 over whole files (text and path) with the index's tokenizer and BM25 code: the baseline."""

    def __init__(self, root: Path, paths: list[str]) -> None:
        from lsp_agent.index.lexical import LexicalIndex
        from lsp_agent.index.tokens import chunk_terms, text_terms

        lengths, blobs = [], []
        for rel in paths:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            length, blob = chunk_terms(text, text_terms(rel))
            lengths.append(length)
            blobs.append(blob)
        self.paths = paths
        self.index = LexicalIndex(np.arange(len(paths)), np.array(lengths), blobs)

    def rank(self, query: str) -> list[str]:
        """Files by BM25 of the whole issue text."""
        from lsp_agent.index.tokens import tokenize

        return [self.paths[int(i)] for i, _ in self.index.search(tokenize(query), 50)]


# Each variant turns one part of locate off (module constants patched for the call), to show what it adds.
ABLATIONS: dict[str, dict[str, dict[str, float]]] = {
    "locate - named paths/symbols": {
        "locate": {"PATH_EVIDENCE": 0.0, "FRAME_EVIDENCE": 0.0, "DEFINITION_EVIDENCE": 0.0}
    },
    "locate - test/doc prior": {
        "locate": {"LOCATE_TEST_FACTOR": 1.0, "DOC_FACTOR": 1.0, "EXAMPLE_FACTOR": 1.0}
    },
    "locate - paths multiply in long queries (add)": {"locate": {"MULTIPLY_PATHS": 0}},
    "locate - next chunks (best only)": {"locate": {"SECOND_CHUNKS": 0.0}},
}


def ablated(index, patch: dict[str, dict[str, float]]) -> Ranker:  # noqa: ANN001
    """locate with some module constants replaced during the call."""
    import importlib

    def rank(query: str) -> list[str]:
        """locate's file ranking with the patch applied."""
        saved = []
        for module_name, values in patch.items():
            module = importlib.import_module(f"lsp_agent.index.{module_name}")
            for key, value in values.items():
                saved.append((module, key, getattr(module, key)))
                setattr(module, key, value)
        try:
            return [f.path for f in index.locate(query, limit=50)]
        finally:
            for module, key, value in saved:
                setattr(module, key, value)

    return rank


def _db_path(corpus: Corpus, embeddings: str) -> Path:
    name = corpus.root.relative_to(CACHE).as_posix().replace("/", "__")
    return CACHE / "index" / f"{name}-{embeddings.replace('/', '_')}.sqlite"


def open_index(corpus: Corpus) -> tuple[object, float]:
    """The corpus's default WorkspaceIndex (cached database, no embeddings); seconds the first full index took."""
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    db = _db_path(corpus, "none")
    timing = db.with_suffix(".seconds")
    db.parent.mkdir(parents=True, exist_ok=True)
    index = WorkspaceIndex(corpus.root, IndexConfig(), db_path=db)
    started = time.perf_counter()
    stats = index.refresh()
    if stats.parsed or not timing.exists():
        timing.write_text(f"{time.perf_counter() - started:.2f}")
    return index, float(timing.read_text())


def _rank_of(ranking: list[str], gold: list[str]) -> int | None:
    """Position (1-based) by which every gold file has appeared, or None."""
    positions = [ranking.index(g) + 1 if g in ranking else None for g in gold]
    return None if None in positions else max(positions)  # type: ignore[type-var]


def _summary(results: list[tuple[int | None, float]], index_seconds: float) -> dict[str, float]:
    n = len(results) or 1
    ranks = [r for r, _ in results]
    out = {f"acc@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r is not None) / n
    lat = sorted(t * 1000 for _, t in results) or [0.0]
    out["p50 ms"] = statistics.median(lat)
    out["p95 ms"] = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    out["index s"] = index_seconds
    return out


def _load(args: argparse.Namespace) -> list[dict]:
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    if args.repo:
        rows = [r for r in rows if args.repo in r["repo"]]
    if args.every > 1:  # a deterministic subset: every k-th instance of each repository, in the file's order
        seen: dict[str, int] = defaultdict(int)
        kept = []
        for row in rows:
            if seen[row["repo"]] % args.every == 0:
                kept.append(row)
            seen[row["repo"]] += 1
        rows = kept
    return rows[: args.limit] if args.limit else rows


def tree_name(corpus: Corpus) -> str:
    """A tree's name for --skip-tree: `owner/name@version` (a release) or `owner/name@commit` (a mirror)."""
    return f"{corpus.repo}@{corpus.source.split()[-1]}"


def _trees(
    rows: list[dict], mirrors: Path | None, min_instances: int, skip: list[str]
) -> list[tuple[Corpus, list[dict]]]:
    """Each tree with its instances (at least `min_instances`, none named in `skip`), a repository's trees oldest
    first (consecutive ones share most chunks)."""
    by_corpus: dict[Path, tuple[Corpus, list[dict]]] = {}
    skipped: dict[str, str] = {}
    for row in rows:
        if row["repo"] in skipped:
            continue
        try:
            corpus = corpus_for(row["repo"], row["id"], row["base_commit"], mirrors)
        except (OSError, LookupError, subprocess.CalledProcessError) as exc:
            skipped[row["repo"]] = str(exc)
            continue
        by_corpus.setdefault(corpus.root, (corpus, []))[1].append(row)
    for repo, why in skipped.items():
        print(
            f"skipped {repo}: no tree ({why}). Give git mirrors with --mirrors DIR or LSP_AGENT_MIRRORS (a folder "
            f"of <owner>+<name> git directories, e.g. what the search tool's fetch of github:{repo} leaves), "
            "or let pip reach PyPI for the release fallback."
        )
    trees = [t for t in by_corpus.values() if len(t[1]) >= min_instances]
    left_out = [t for t in trees if any(name in tree_name(t[0]) for name in skip)]
    for corpus, instances in left_out:
        print(f"left out by --skip-tree: {tree_name(corpus)} ({len(instances)} instances)")
    trees = [t for t in trees if t not in left_out]
    return sorted(trees, key=lambda t: (t[0].repo, t[0].when))


def _systems(args: argparse.Namespace, corpus: Corpus, index, dense) -> dict[str, tuple[Ranker, str]]:  # noqa: ANN001
    """The rankers for one tree, each with the index whose cost it pays ("default" or "dense")."""
    systems: dict[str, tuple[Ranker, str]] = {
        "search, hits as files": (lambda q: search_files(index, q), "default"),
        "locate (default)": (lambda q: [f.path for f in index.locate(q, limit=50)], "default"),
    }
    if args.ablations:
        systems.update({name: (ablated(index, patch), "default") for name, patch in ABLATIONS.items()})
    if dense is not None:
        label = "MiniLM" if args.embeddings == "local" else args.embeddings
        systems.update(
            {
                name: (rank, "dense")
                for name, rank in dense_systems(index, dense, label, CACHE / "vectors.sqlite3").items()
            }
        )
    return systems


def run(args: argparse.Namespace) -> int:
    """Index each tree once, rank every instance with every system, print the table."""
    rows = _load(args)
    if not rows:
        print(f"no instances in {args.data} match --repo {args.repo!r}")
        return 0
    trees = _trees(rows, args.mirrors, args.min_instances, args.skip_tree)
    if args.plan:
        return _plan(trees, args.embeddings)
    results: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    index_time: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    missing: list[str] = []
    sources: dict[str, set[str]] = defaultdict(set)
    use_dense = args.embeddings.lower() not in ("", "none", "off", "false")
    for corpus, instances in trees:
        sources[corpus.repo].add(corpus.source)
        index, seconds = open_index(corpus)
        dense, cost = None, {}
        if use_dense:
            db = _db_path(corpus, args.embeddings)
            dense, cost = open_dense_index(corpus.root, db, args.embeddings, CACHE / "vectors.sqlite3")
        print(f"{corpus.repo} {corpus.source}: {len(instances)} instances, index {seconds:.1f} s", end="")
        if cost:
            print(
                f"; with {args.embeddings} {cost['seconds']:.1f} s, {cost['embedded']} of {cost['chunks']} "
                "chunks embedded (the rest from the vector cache)",
                end="",
            )
        print(flush=True)
        with index, dense or nullcontext():
            paths = _walk_paths(index)
            started = time.perf_counter()
            baseline = WholeFileBM25(corpus.root, paths)
            baseline_seconds = (
                time.perf_counter() - started
            )  # its index time: the other systems' warm-up is not
            systems = {"BM25 whole files (baseline)": (baseline.rank, "baseline")}
            systems.update(_systems(args, corpus, index, dense))
            for rank, _ in systems.values():  # builds the in-memory rankers once (and loads the model), as a
                rank("warm up")  # server has them
            cost_of = {"baseline": baseline_seconds, "default": seconds}
            cost_of["dense"] = cost.get("seconds", 0.0)
            for repo in (corpus.repo, "overall"):
                for name, (_, kind) in systems.items():
                    index_time[name][repo] += cost_of[kind]
            memo = getattr(dense, "_embedder", None)
            _rank_instances(corpus, instances, systems, results, missing, args.verbose, memo)
        if results:  # the table so far, after each tree (a long embedding run can be read while it goes)
            _print(results, index_time, sources, missing, len(rows))
    return 0


def _plan(trees: list[tuple[Corpus, list[dict]]], embeddings: str) -> int:
    """--plan: per tree, the chunks the embedding run would embed (default indexes are built if absent)."""
    if embeddings.lower() in ("", "none", "off", "false"):
        print(
            "--plan needs --embeddings (local or a litellm model): it counts the chunks that model would embed"
        )
        return 2
    planned = [(tree_name(corpus), *tree_chunks(corpus, instances)) for corpus, instances in trees]
    embedding_plan(planned, embeddings, CACHE / "vectors.sqlite3")
    return 0


def tree_chunks(corpus: Corpus, instances: list[dict]) -> tuple[int, set[str]]:
    """A tree's usable instances (every gold file in it) and the hashes of its default index's chunks."""
    index, _ = open_index(corpus)
    with index:
        hashes = {h for (h,) in index._reader.conn.execute("SELECT hash FROM chunks")}
    usable = sum(all((corpus.root / g).is_file() for g in row["gold"]) for row in instances)
    return usable, hashes


def _rank_instances(
    corpus: Corpus, instances: list[dict], systems, results, missing, verbose: bool, memo
) -> None:  # noqa: ANN001
    """Rank each instance of a tree with every system, recording the gold file's rank and the query time (with
    the query's embedding time when a dense system reused the vector another one computed)."""
    if isinstance(memo, QueryMemo):
        memo.take_reused()  # the warm-up's reuse is nobody's latency
    for row in instances:
        if not all((corpus.root / g).is_file() for g in row["gold"]):
            missing.append(f"{row['id']} ({corpus.source})")
            continue
        for name, (rank, _) in systems.items():
            t = time.perf_counter()
            ranking = rank(row["query"])
            elapsed = time.perf_counter() - t
            if isinstance(memo, QueryMemo):
                elapsed += memo.take_reused()
            r = _rank_of(ranking, row["gold"])
            results[name][corpus.repo].append((r, elapsed))
            results[name]["overall"].append((r, elapsed))
            if verbose and name.startswith("locate"):
                print(f"  {row['id']} {name}: rank {r} top {ranking[:3]}")


def _walk_paths(index) -> list[str]:  # noqa: ANN001
    """Every indexed text file (the files the baseline ranks)."""
    rows = index._reader.conn.execute("SELECT path FROM files WHERE language != 'binary'").fetchall()
    return sorted(r[0] for r in rows)


def _print(results, index_time, sources, missing, total) -> None:  # noqa: ANN001
    for repo, srcs in sorted(sources.items()):
        print(f"{repo}: {', '.join(sorted(srcs))}")
    if missing:
        print(f"gold file absent from the tree, left out ({len(missing)} of {total}): {', '.join(missing)}")
    header = ["acc@1", "acc@3", "acc@5", "acc@10", "MRR", "p50 ms", "p95 ms", "index s"]
    repos = sorted({r for per in results.values() for r in per if r != "overall"}) + ["overall"]
    width = max(len(n) for n in results) + 2
    for repo in repos:
        n = len(next(iter(results.values()))[repo])
        print(f"\n{repo} ({n} instances)")
        print(" " * width + "  ".join(f"{h:>7}" for h in header))
        for name, per in results.items():
            m = _summary(per[repo], index_time[name][repo])
            print(
                name.ljust(width)
                + "  ".join(
                    f"{m[h]:7.3f}" if h.startswith(("acc", "MRR")) else f"{m[h]:7.1f}" for h in header
                )
            )
    sys.stdout.flush()


def main() -> int:
    """Parse the flags; skip cleanly when the data file is missing."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("LSP_AGENT_LOCALIZATION_DATA", DEFAULT_DATA))
    )
    ap.add_argument(
        "--mirrors", type=Path, default=default_mirrors(), help="folder of <owner>+<name> git dirs"
    )
    ap.add_argument("--repo", help="only instances whose repo contains this")
    ap.add_argument("--limit", type=int, help="only the first N instances (after --repo)")
    ap.add_argument("--every", type=int, default=1, help="only every K-th instance of each repository")
    ap.add_argument(
        "--min-instances", type=int, default=1, help="only trees with at least N instances (fewer to embed)"
    )
    ap.add_argument(
        "--skip-tree",
        action="append",
        default=[],
        metavar="NAME",
        help="leave out trees whose owner/name@version contains NAME (repeatable), e.g. django@4.1a1",
    )
    ap.add_argument("--embeddings", default="none", help="index embeddings: none | local | a litellm model")
    ap.add_argument(
        "--plan",
        action="store_true",
        help="only count, per tree, the chunks --embeddings would embed (not in the vector cache yet); no ranking",
    )
    ap.add_argument("--ablations", action="store_true", help="also run locate with each part turned off")
    ap.add_argument(
        "--folds",
        action="store_true",
        help="leave one repository out: tune locate's constants on two, report on the third "
        "(localization_folds.md)",
    )
    ap.add_argument("--folds-out", metavar="JSON", help="with --folds: also write the figures to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each instance's rank")
    args = ap.parse_args()
    if not args.data.is_file():
        print(f"skipped: no benchmark data at {args.data} (pass --data or set LSP_AGENT_LOCALIZATION_DATA)")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.folds:
        from localization_folds import run as run_folds

        return run_folds(args)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
