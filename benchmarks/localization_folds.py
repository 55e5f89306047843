"""Leave one repository out: tune locate's constants on two repositories, report on the third (the protocol,
fixed before the first run, is benchmarks/localization_folds.md).

    python benchmarks/localization.py --folds [--data FILE] [--every K]

Each tree is indexed once (the cache of localization.py); each query's features (per candidate file: best chunk
score, next chunk scores, named path/frame/module counts, definition weight, kind) are computed once through
locate's own functions and cached, so a grid point is scored from arrays without touching the index.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import pickle
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GRID: dict[str, tuple[float, ...]] = {
    "SECOND_CHUNKS": (0.1, 0.25, 0.5),
    "PATH_EVIDENCE": (0.4, 0.8, 1.6),
    "FRAME_EVIDENCE": (0.25, 0.5, 1.0),
    "DEFINITION_EVIDENCE": (0.05, 0.1, 0.2, 0.4),
    "LOCATE_TEST_FACTOR": (0.3, 0.5, 0.7),
}
LIMIT = 50  # files ranked per query, as localization.py asks locate for
Params = dict[str, float]


@dataclass
class Features:
    """What every grid point needs of one query on one tree (arrays over its candidate files)."""

    paths: list[str]
    best: np.ndarray  # best chunk score
    rest: np.ndarray  # the next chunks' scores (weighted by SECOND_CHUNKS)
    named: np.ndarray  # named paths + half the named modules (times PATH_EVIDENCE)
    frames: np.ndarray  # traceback frames, the last counting twice (times FRAME_EVIDENCE)
    defined: np.ndarray  # definition weight (times DEFINITION_EVIDENCE)
    is_test: np.ndarray  # the file's kind factor is LOCATE_TEST_FACTOR
    factor: np.ndarray  # the kind factor of the others (fixed constants)
    short: bool  # named paths add (a short query) rather than multiply
    order: np.ndarray  # candidates in path order (locate breaks score ties by path)


@contextmanager
def patched(values: Params):
    """locate's module constants replaced for the duration."""
    from lsp_agent.index import locate

    saved = {k: getattr(locate, k) for k in values}
    for k, v in values.items():
        setattr(locate, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(locate, k, v)


def defaults() -> Params:
    """locate's constants as they are now."""
    from lsp_agent.index import locate

    return {k: float(getattr(locate, k)) for k in GRID}


def features(index, query: str) -> Features:  # noqa: ANN001
    """The features of `query` on an open WorkspaceIndex, from locate's own functions with unit constants."""
    from collections import defaultdict

    from lsp_agent.index import locate as L
    from lsp_agent.index.query import SHORT_QUERY_WORDS, analyze_query
    from lsp_agent.index.tokens import tokenize

    analysis = analyze_query(query)
    index._ensure_rankers()
    files, lexical, conn = index._file_map(), index._lexical, index._reader.conn
    terms = tokenize(analysis.text)
    with patched({"SECOND_CHUNKS": 0.0}):
        best, _ = L.text_scores(lexical, files, terms, files.chunk_positions)
    with patched({"SECOND_CHUNKS": 1.0}):
        both, _ = L.text_scores(lexical, files, terms, files.chunk_positions)
    unbounded = {"MAX_PATH_EVIDENCE": float("inf")}
    with patched({**unbounded, "PATH_EVIDENCE": 1.0, "FRAME_EVIDENCE": 0.0}):
        named, _, _ = L.name_evidence(conn, files, analysis)
    with patched({**unbounded, "PATH_EVIDENCE": 0.0, "FRAME_EVIDENCE": 1.0}):
        frames, _, _ = L.name_evidence(conn, files, analysis)
    defined: dict[int, float] = defaultdict(float)
    with patched({"DEFINITION_EVIDENCE": 1.0}):
        L._definition_evidence(conn, files, analysis, defined, defaultdict(list), defaultdict(list))
    candidates = sorted(set(np.flatnonzero(best > 0).tolist()) | set(named) | set(frames))
    pick = np.array(candidates, dtype=np.int64)

    def dense(sparse: dict[int, float]) -> np.ndarray:
        """A per-candidate array from a per-file dict."""
        return np.array([sparse.get(f, 0.0) for f in candidates], dtype=np.float64)

    asked = analysis.wants_tests or analysis.wants_docs
    kinds = [files.kinds[f] for f in candidates]
    paths = [files.paths[f] for f in candidates]
    return Features(
        paths=paths,
        best=best[pick],
        rest=both[pick] - best[pick],
        named=dense(named),
        frames=dense(frames),
        defined=dense(defined),
        is_test=np.array([not asked and k == "test" for k in kinds], dtype=bool),
        factor=np.array([L.kind_factor(k, analysis) for k in kinds], dtype=np.float64),
        short=len(analysis.text.split()) <= SHORT_QUERY_WORDS,
        order=np.argsort(np.array(paths, dtype=object), kind="stable"),
    )


def scores(feat: Features, p: Params) -> np.ndarray:
    """locate's file scores of the candidates under constants `p`, from the features alone."""
    from lsp_agent.index import locate as L

    text = feat.best + p["SECOND_CHUNKS"] * feat.rest
    top = float(text.max())
    scores = text / top if top > 0 else text
    scores = scores * (1 + p["DEFINITION_EVIDENCE"] * feat.defined)
    named = L.SHORT_PATH_EVIDENCE if feat.short else p["PATH_EVIDENCE"]
    bonus = np.minimum(named * feat.named + p["FRAME_EVIDENCE"] * feat.frames, L.MAX_PATH_EVIDENCE)
    if feat.short or not L.MULTIPLY_PATHS:
        scores = scores + bonus
    else:
        scores = scores * (1 + bonus)
    return scores * np.where(feat.is_test, p["LOCATE_TEST_FACTOR"], feat.factor)


def ranking(feat: Features, p: Params) -> list[str]:
    """locate's file ranking (first LIMIT paths) under constants `p`."""
    if not len(feat.paths):
        return []
    scores_ = scores(feat, p)
    s = scores_[feat.order]  # path order, then a stable sort by score keeps ties in path order
    keep = feat.order[np.argsort(-s, kind="stable")]
    keep = keep[scores_[keep] > 0][:LIMIT]
    return [feat.paths[i] for i in keep]


def grid() -> list[Params]:
    """Every grid point, in grid order."""
    keys = list(GRID)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*GRID.values())]


def cache_key(rows: list[dict]) -> str:
    """A hash of the instances and of the code the features come from (a change of either recomputes them)."""
    from lsp_agent.index import locate, query

    h = hashlib.sha256()
    for part in (inspect.getsource(locate), inspect.getsource(query), inspect.getsource(features)):
        h.update(part.encode())
    for row in rows:
        h.update(f"{row['id']}\0{row['query']}".encode())
    return h.hexdigest()[:16]


def cached_features(index, rows: list[dict], cache: Path) -> dict[str, Features]:  # noqa: ANN001
    """Features of every row's query on one tree, computed once and kept under `cache`."""
    path = cache / f"features-{cache_key(rows)}.pickle"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    out = {row["id"]: features(index, row["query"]) for row in rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def rank_of(paths: list[str], gold: list[str]) -> int | None:
    """Position (1-based) by which every gold file has appeared, or None."""
    positions = [paths.index(g) + 1 if g in paths else None for g in gold]
    return None if None in positions else max(positions)  # type: ignore[type-var]


def metrics(ranks: list[int | None]) -> dict[str, float]:
    """acc@1/3/5/10 and MRR of a list of ranks."""
    n = len(ranks) or 1
    out = {f"acc@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 3, 5, 10)}
    out["MRR"] = sum(1 / r for r in ranks if r is not None) / n
    return out


def gold_rank(feat: Features, gold: list[str], p: Params) -> int | None:
    """rank_of(ranking(feat, p), gold) without sorting: each gold file's place counted from the scores."""
    if not all(g in feat.paths for g in gold):
        return None
    s = scores(feat, p)
    place = np.empty(len(feat.order), dtype=np.int64)
    place[feat.order] = np.arange(len(feat.order))  # each candidate's place in path order
    worst = 0
    for g in gold:
        i = feat.paths.index(g)
        if s[i] <= 0:
            return None
        worst = max(worst, int((s > s[i]).sum() + ((s == s[i]) & (place < place[i])).sum()) + 1)
    return worst if worst <= LIMIT else None


def evaluate(data: dict[str, list[tuple[Features, list[str]]]], p: Params) -> dict[str, dict[str, float]]:
    """Metrics per repository of the feature scorer under constants `p`."""
    return {repo: metrics([gold_rank(f, gold, p) for f, gold in items]) for repo, items in data.items()}


def objective(per_repo: dict[str, dict[str, float]], p: Params, default: Params) -> tuple[float, ...]:
    """Macro acc@5, then macro acc@1, then macro MRR, then fewest constants changed (higher is better)."""
    n = len(per_repo)
    macro = [sum(m[key] for m in per_repo.values()) / n for key in ("acc@5", "acc@1", "MRR")]
    return (*[round(v, 9) for v in macro], -sum(p[k] != default[k] for k in p))


def tune(data: dict[str, list[tuple[Features, list[str]]]], default: Params) -> Params:
    """The grid point with the best objective on `data` (the first in grid order among equals)."""
    best, best_key = default, None
    for p in grid():
        key = objective(evaluate(data, p), p, default)
        if best_key is None or key > best_key:
            best, best_key = p, key
    return best


def majority(chosen: list[Params]) -> Params | None:
    """Per constant, the value at least two folds chose; None if some constant has no such value."""
    out: Params = {}
    for k in GRID:
        values = [p[k] for p in chosen]
        top = max(set(values), key=values.count)
        if values.count(top) < 2:
            return None
        out[k] = top
    return out


def collect(args) -> tuple[dict, dict, dict, dict]:  # noqa: ANN001
    """Per repository: (features, gold) per instance, baseline ranks, and the real locate's default rankings
    beside the feature scorer's (the check); and each repository's trees."""
    from localization import CACHE, WholeFileBM25, _load, _trees, _walk_paths, open_index

    data: dict[str, list[tuple[Features, list[str]]]] = {}
    baseline: dict[str, list[int | None]] = {}
    agree: dict[str, list[bool]] = {}
    trees: dict[str, list] = {}
    default = defaults()
    for corpus, instances in _trees(_load(args), args.mirrors, args.min_instances, args.skip_tree):
        usable = [r for r in instances if all((corpus.root / g).is_file() for g in r["gold"])]
        if not usable:
            continue
        trees.setdefault(corpus.repo, []).append((corpus, usable))
        index, _ = open_index(corpus)
        with index:
            name = corpus.root.relative_to(CACHE).as_posix().replace("/", "__")
            feats = cached_features(index, usable, CACHE / "folds" / name)
            bm25 = WholeFileBM25(corpus.root, _walk_paths(index))
            for row in usable:
                real = [f.path for f in index.locate(row["query"], limit=LIMIT)]
                data.setdefault(corpus.repo, []).append((feats[row["id"]], row["gold"]))
                baseline.setdefault(corpus.repo, []).append(rank_of(bm25.rank(row["query"]), row["gold"]))
                agree.setdefault(corpus.repo, []).append(real == ranking(feats[row["id"]], default))
        print(f"{corpus.repo} {corpus.source}: {len(usable)} of {len(instances)} instances", flush=True)
    return data, baseline, agree, trees


def real_ranks(trees: list, p: Params) -> list[int | None]:
    """Ranks from the real `index.locate` with locate's constants set to `p` (a held-out repository's trees)."""
    from localization import open_index

    ranks = []
    with patched(p):
        for corpus, rows in trees:
            index, _ = open_index(corpus)
            with index:
                ranks += [
                    rank_of([f.path for f in index.locate(r["query"], limit=LIMIT)], r["gold"]) for r in rows
                ]
    return ranks


def _line(label: str, m: dict[str, float]) -> str:
    return label.ljust(44) + "  ".join(f"{m[k]:6.3f}" for k in ("acc@1", "acc@3", "acc@5", "acc@10", "MRR"))


def run(args) -> int:  # noqa: ANN001
    """The three folds: tune on two repositories, report on the third, beside the default and the baseline."""
    data, baseline, agree, trees = collect(args)
    default = defaults()
    for repo, flags in sorted(agree.items()):
        print(
            f"check: feature scorer = real locate (default constants) on {sum(flags)}/{len(flags)} of {repo}"
        )
    repos = sorted(data)
    pooled = [item for r in repos for item in data[r]]
    print(f"\nall {len(pooled)} instances (every repository; the default was set looking at all of them)")
    print(_line("BM25 whole files (baseline)", metrics([r for repo in repos for r in baseline[repo]])))
    print(_line("locate default", evaluate({"all": pooled}, default)["all"]))
    chosen, report = [], {}
    for held in repos:
        tuning = {r: data[r] for r in repos if r != held}
        p = tune(tuning, default)
        chosen.append(p)
        real = metrics(real_ranks(trees[held], p))
        rows = {
            f"{held} BM25 whole files (baseline)": metrics(baseline[held]),
            f"{held} locate default": evaluate({held: data[held]}, default)[held],
            f"{held} locate fold-tuned (held out)": evaluate({held: data[held]}, p)[held],
            f"{held} locate fold-tuned, real locate": real,
        }
        for r in tuning:
            rows[f"{r} locate default (tuned on)"] = evaluate({r: data[r]}, default)[r]
            rows[f"{r} locate fold-tuned (tuned on)"] = evaluate({r: data[r]}, p)[r]
        report[held] = {"tuned": p, "rows": rows}
        print(f"\nfold: held out {held} ({len(data[held])}), tuned on {', '.join(tuning)}")
        print(
            "  changed: "
            + (", ".join(f"{k} {default[k]} -> {v}" for k, v in p.items() if v != default[k]) or "none")
        )
        print(" " * 44 + "  ".join(f"{h:>6}" for h in ("acc@1", "acc@3", "acc@5", "acc@10", "MRR")))
        for label, m in rows.items():
            print(_line(label, m))
    _decide(report, chosen, default)
    out = Path(args.folds_out) if getattr(args, "folds_out", None) else None
    if out:
        out.write_text(__import__("json").dumps(report, indent=1))
    return 0


def _decide(report: dict, chosen: list[Params], default: Params) -> None:
    """The protocol's rule for making the fold-tuned constants the default, applied and printed."""
    wins = 0
    held_default, held_tuned = [], []
    for held, r in report.items():
        d, t = r["rows"][f"{held} locate default"], r["rows"][f"{held} locate fold-tuned (held out)"]
        held_default.append(d["acc@5"])
        held_tuned.append(t["acc@5"])
        wins += (t["acc@5"], t["acc@1"]) > (d["acc@5"], d["acc@1"])
    agreed = majority(chosen)
    mean_d, mean_t = sum(held_default) / len(held_default), sum(held_tuned) / len(held_tuned)
    print(
        f"\nheld-out acc@5, mean over folds: default {mean_d:.3f}, fold-tuned {mean_t:.3f}; tuned wins {wins}/3"
    )
    print(f"majority constants: {agreed}")
    adopt = agreed is not None and wins >= 2 and mean_t > mean_d
    print(
        "decision (localization_folds.md): "
        + ("adopt the majority constants" if adopt else "keep the default")
    )
