"""File localization from real issue reports: does the index put the file a fix changed among its first k files?

    python benchmarks/localization.py [--data FILE] [--mirrors DIR] [--repo django] [--limit 40] [--embeddings local]

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
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from localization_corpus import CACHE, Corpus, corpus_for, default_mirrors  # noqa: E402

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


def search_files(index, query: str) -> list[str]:  # noqa: ANN001
    """`search` hits read as files, in order of first appearance."""
    files: list[str] = []
    for hit in index.search(query, top_k=50):
        if hit.path not in files:
            files.append(hit.path)
    return files


# Each variant turns one part of locate off (module constants patched for the call), to show what it adds.
ABLATIONS: dict[str, dict[str, dict[str, float]]] = {
    "locate - named paths/symbols": {
        "locate": {"PATH_EVIDENCE": 0.0, "FRAME_EVIDENCE": 0.0, "DEFINITION_EVIDENCE": 0.0}
    },
    "locate - test/doc prior": {"locate": {"TEST_FACTOR": 1.0, "DOC_FACTOR": 1.0, "EXAMPLE_FACTOR": 1.0}},
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


def open_index(corpus: Corpus, embeddings: str) -> tuple[object, float]:
    """The corpus's WorkspaceIndex (cached database); seconds the first full index took."""
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    name = corpus.root.relative_to(CACHE).as_posix().replace("/", "__")
    db = CACHE / "index" / f"{name}-{embeddings.replace('/', '_')}.sqlite"
    timing = db.with_suffix(".seconds")
    db.parent.mkdir(parents=True, exist_ok=True)
    index = WorkspaceIndex(corpus.root, IndexConfig(embeddings=embeddings), db_path=db)
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
    return rows[: args.limit] if args.limit else rows


def run(args: argparse.Namespace) -> int:
    """Index each tree once, rank every instance with every system, print the table."""
    rows = _load(args)
    if not rows:
        print(f"no instances in {args.data} match --repo {args.repo!r}")
        return 0
    by_corpus: dict[Path, tuple[Corpus, list[dict]]] = {}
    skipped: dict[str, str] = {}
    for row in rows:
        if row["repo"] in skipped:
            continue
        try:
            corpus = corpus_for(row["repo"], row["id"], row["base_commit"], args.mirrors)
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
    if not by_corpus:
        return 0
    results: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    index_time: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    missing: list[str] = []
    sources: dict[str, set[str]] = defaultdict(set)
    for corpus, instances in by_corpus.values():
        sources[corpus.repo].add(corpus.source)
        index, seconds = open_index(corpus, args.embeddings)
        with index:
            paths = sorted(index.indexed_paths()) if hasattr(index, "indexed_paths") else _walk_paths(index)
            started = time.perf_counter()
            baseline = WholeFileBM25(corpus.root, paths)
            systems: dict[str, Ranker] = {
                "BM25 whole files (baseline)": baseline.rank,
                "search, hits as files": lambda q, ix=index: search_files(ix, q),
            }
            if hasattr(index, "locate"):
                systems["locate (default)"] = lambda q, ix=index: [f.path for f in ix.locate(q, limit=50)]
                if args.ablations:
                    systems.update({name: ablated(index, patch) for name, patch in ABLATIONS.items()})
            for rank in systems.values():
                rank("warm up")  # builds the in-memory rankers once, as a running server has them
            for repo in (corpus.repo, "overall"):
                index_time["BM25 whole files (baseline)"][repo] += time.perf_counter() - started
                for name in systems:
                    if name != "BM25 whole files (baseline)":
                        index_time[name][repo] += seconds
            for row in instances:
                if not all((corpus.root / g).is_file() for g in row["gold"]):
                    missing.append(f"{row['id']} ({corpus.source})")
                    continue
                for name, rank in systems.items():
                    t = time.perf_counter()
                    ranking = rank(row["query"])
                    elapsed = time.perf_counter() - t
                    r = _rank_of(ranking, row["gold"])
                    results[name][corpus.repo].append((r, elapsed))
                    results[name]["overall"].append((r, elapsed))
                    if args.verbose and name.startswith("locate"):
                        print(f"  {row['id']}: rank {r} top {ranking[:3]}")
    _print(results, index_time, sources, missing, len(rows))
    return 0


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
    ap.add_argument("--embeddings", default="none", help="index embeddings: none | local | a litellm model")
    ap.add_argument("--ablations", action="store_true", help="also run locate with each part turned off")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each instance's rank")
    args = ap.parse_args()
    if not args.data.is_file():
        print(f"skipped: no benchmark data at {args.data} (pass --data or set LSP_AGENT_LOCALIZATION_DATA)")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
