"""The dense layer on a subset, with its held-out half (protocol: localization_folds.md, "The dense layer
(embeddings), separately"; fixed before this module ran).

    python benchmarks/localization_dense_subset.py --plan             # trees, chunks to embed, run order
    python benchmarks/localization_dense_subset.py --out DIR          # embed and rank, tree by tree (resumable)
    python benchmarks/localization_dense_subset.py --out DIR --report # figures from DIR/ranks.jsonl only

Per repository, `random.Random(34)` samples up to 30 instance ids from the sorted ids and shuffles them; the
first half (`len // 2`: an odd sample gives the held-out half the extra instance) is the dev half, the rest the
held-out half. Each tree of the subset is indexed without embeddings (the lexical default) and with
all-MiniLM-L6-v2; every usable instance is ranked by each system below and its rank appended to DIR/ranks.jsonl
as soon as its tree is done, so a run cut short keeps every finished tree and a rerun skips them (vectors come
from the vector cache). `DENSE_SHARE` is chosen from SHARES on the dev halves (macro acc@5 over repositories,
then acc@1, then MRR, then the default share, then grid order: the folds' objective) and reported on the held-out
halves beside the lexical default on the same instances.

Trees run in an order fixed from counts alone, before any figure (`tree_order`): within a repository, most
subset instances per chunk to embed first; repositories taken in turn, the one with the cheapest first tree
first. Figures cover the trees finished when the run stopped; DIR/README.md says which.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

SEED = 34
PER_REPO = 30
SHARES = (0.1, 0.2, 0.3, 0.5)
DEFAULT_SHARE = 0.3  # locate's DENSE_SHARE when the protocol was fixed
HALVES = ("dev", "held-out")
LEXICAL = "locate, lexical default (no embeddings)"
DENSE_ALONE = "MiniLM alone (best chunk)"
CHUNK_RRF = "search + MiniLM (chunk RRF)"
KS = (1, 3, 5, 10)


def share_system(share: float) -> str:
    """The name of locate fused with the dense layer at `share`."""
    return f"locate + MiniLM (share {share})"


def dense_subset(rows: list[dict], per_repo: int = PER_REPO, seed: int = SEED) -> dict[str, tuple[str, str]]:
    """Each sampled instance id's (repository, half): per repository a fresh Random(seed) samples up to
    `per_repo` of its sorted ids and shuffles them; the first len // 2 are "dev", the rest "held-out"."""
    by_repo: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(row["id"])
    chosen: dict[str, tuple[str, str]] = {}
    for repo, ids in sorted(by_repo.items()):
        rng = random.Random(seed)
        sample = rng.sample(sorted(ids), min(per_repo, len(ids)))
        rng.shuffle(sample)
        half = len(sample) // 2
        for position, instance in enumerate(sample):
            chosen[instance] = (repo, HALVES[position >= half])
    return chosen


def tree_order(trees: list[dict]) -> list[str]:
    """Tree names in run order, from counts only (each tree: name, repo, instances, to_embed): within a
    repository most instances per chunk to embed first (ties: name); repositories in turn, the repository whose
    first tree embeds least first."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for tree in trees:
        by_repo[tree["repo"]].append(tree)
    queues = [
        sorted(items, key=lambda t: (-t["instances"] / max(t["to_embed"], 1), t["name"]))
        for items in by_repo.values()
    ]
    queues.sort(key=lambda q: (q[0]["to_embed"], q[0]["repo"]))
    order: list[str] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0)["name"])
    return order


def metrics(ranks: list[int | None]) -> dict[str, float]:
    """acc@1/3/5/10 (every gold file among the first k) and MRR of a list of ranks; n the count."""
    n = len(ranks) or 1
    out = {f"acc@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r is not None) / n
    out["n"] = len(ranks)
    return out


def figures(records: list[dict]) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """Metrics by half, system and repository (plus "all" pooled) from the per-instance records."""
    ranks: dict[str, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for rec in records:
        for system, rank in rec["ranks"].items():
            for repo in (rec["repo"], "all"):
                ranks[rec["half"]][system][repo].append(rank)
    return {
        half: {system: {repo: metrics(r) for repo, r in per.items()} for system, per in systems.items()}
        for half, systems in ranks.items()
    }


def objective(per_repo: dict[str, dict[str, float]], share: float) -> tuple[float, ...]:
    """Macro acc@5 over repositories, then macro acc@1, then macro MRR, then the fewest changes from the default
    (the default share itself first); higher is better. Equal keys fall to grid order (choose_share)."""
    repos = [r for r in per_repo if r != "all"]
    macro = [sum(per_repo[r][key] for r in repos) / len(repos) for key in ("acc@5", "acc@1", "MRR")]
    return (*[round(v, 9) for v in macro], -int(share != DEFAULT_SHARE))


def choose_share(figs: dict) -> float | None:
    """The share with the best objective on the dev halves (the first in SHARES among equals); None without
    dev figures."""
    dev = figs.get("dev", {})
    best, best_key = None, None
    for share in SHARES:
        per_repo = dev.get(share_system(share))
        if not per_repo:
            continue
        key = objective(per_repo, share)
        if best_key is None or key > best_key:
            best, best_key = share, key
    return best


def read_records(path: Path) -> list[dict]:
    """The per-instance records written so far."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def report(out: Path) -> dict:
    """Print the tables from out/ranks.jsonl and write out/figures.json; returns the figures."""
    records = read_records(out / "ranks.jsonl")
    figs = figures(records)
    chosen = choose_share(figs)
    systems = [LEXICAL, *(share_system(s) for s in SHARES), DENSE_ALONE, CHUNK_RRF]
    lines = [f"trees done: {', '.join(sorted({r['tree'] for r in records})) or 'none'}"]
    for half in HALVES:
        per_system = figs.get(half, {})
        repos = sorted({repo for per in per_system.values() for repo in per if repo != "all"}) + ["all"]
        for repo in repos:
            n = per_system.get(LEXICAL, {}).get(repo, {}).get("n", 0)
            lines.append(f"\n{half} half, {repo} ({n} instances)")
            lines.append(
                " " * 44 + "  ".join(f"{h:>6}" for h in ("acc@1", "acc@3", "acc@5", "acc@10", "MRR"))
            )
            for system in systems:
                m = per_system.get(system, {}).get(repo)
                if m:
                    cells = "  ".join(f"{m[k]:6.3f}" for k in ("acc@1", "acc@3", "acc@5", "acc@10", "MRR"))
                    lines.append(system.ljust(44) + cells)
    dev_keys = {s: objective(figs["dev"][share_system(s)], s)[:3] for s in SHARES if "dev" in figs}
    lines.append("\ndev halves, objective per share (macro acc@5, acc@1, MRR):")
    lines += [f"  {s}: " + ", ".join(f"{v:.3f}" for v in key) for s, key in dev_keys.items()]
    lines.append(f"chosen DENSE_SHARE on the dev halves: {chosen} (locate's default {DEFAULT_SHARE})")
    text = "\n".join(lines)
    print(text, flush=True)
    (out / "tables.txt").write_text(text + "\n")
    result = {"chosen_share": chosen, "default_share": DEFAULT_SHARE, "figures": figs}
    result["trees"] = sorted({r["tree"] for r in records})
    (out / "figures.json").write_text(json.dumps(result, indent=1))
    return result


def _subset_trees(data: Path) -> tuple[dict[str, tuple[str, str]], list]:
    """The subset's instance halves and its trees (with their instances) as localization.py finds them."""
    from localization import _trees
    from localization_corpus import default_mirrors

    rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    halves = dense_subset(rows)
    chosen = [r for r in rows if r["id"] in halves]
    return halves, _trees(chosen, default_mirrors(), 1, [])


def plan(data: Path) -> list[dict]:
    """Per tree: name, repository, usable subset instances, distinct chunks and chunks to embed (not in the vector
    cache); builds the default indexes if absent and embeds nothing. Printed in run order."""
    import sqlite3

    from localization import CACHE, tree_chunks, tree_name

    from lsp_agent.index.embeddings import LOCAL_MODEL_NAME
    from lsp_agent.index.vector_cache import cache_model_key

    _, trees = _subset_trees(data)
    vectors = CACHE / "vectors.sqlite3"
    known: set[str] = set()
    if vectors.exists():
        conn = sqlite3.connect(f"file:{vectors}?mode=ro", uri=True, timeout=60)
        key = cache_model_key(LOCAL_MODEL_NAME, None)
        known = {h for (h,) in conn.execute("SELECT hash FROM vectors WHERE model=?", (key,))}
        conn.close()
    counted = []
    for corpus, instances in trees:
        usable, hashes = tree_chunks(corpus, instances)
        counted.append(
            {"name": tree_name(corpus), "repo": corpus.repo, "instances": usable, "chunks": len(hashes)}
        )
        counted[-1]["to_embed"] = len(hashes - known)
    by_name = {t["name"]: t for t in counted}
    ordered = [by_name[name] for name in tree_order(counted)]
    for t in ordered:
        print(
            f"{t['name']}: {t['instances']} usable instances, {t['chunks']} chunks, {t['to_embed']} to embed"
        )
    print(f"in all: {sum(t['to_embed'] for t in ordered)} chunks to embed (before reuse between trees)")
    return ordered


def rankers(index, dense) -> dict:  # noqa: ANN001
    """The systems ranked on every instance: the lexical default, locate fused at each share, and for context the
    dense layer alone and search's chunk RRF."""
    from localization_dense import dense_files, locate_files, search_files, with_share

    systems = {LEXICAL: lambda q: locate_files(index, q)}
    systems.update({share_system(s): with_share(dense, s) for s in SHARES})
    systems[DENSE_ALONE] = lambda q: dense_files(dense, q)
    systems[CHUNK_RRF] = lambda q: search_files(dense, q)
    return systems


def run_tree(corpus, instances: list[dict], halves: dict, out: Path) -> dict:  # noqa: ANN001
    """Index and embed one tree, rank its usable instances with every system, append their records; returns the
    tree's cost (seconds, CPU seconds, chunks embedded)."""
    from localization import CACHE, _db_path, _rank_of, open_index, tree_name
    from localization_dense import open_dense_index

    started, cpu = time.perf_counter(), time.process_time()
    index, _ = open_index(corpus)
    dense, cost = open_dense_index(corpus.root, _db_path(corpus, "local"), "local", CACHE / "vectors.sqlite3")
    embedded_at = (time.perf_counter() - started, time.process_time() - cpu)
    name = tree_name(corpus)
    with index, dense:
        systems = rankers(index, dense)
        for rank in systems.values():
            rank("warm up")
        records = []
        for row in instances:
            if not all((corpus.root / g).is_file() for g in row["gold"]):
                print(f"  {row['id']}: gold file absent from {name}, left out", flush=True)
                continue
            ranks = {system: _rank_of(rank(row["query"]), row["gold"]) for system, rank in systems.items()}
            repo, half = halves[row["id"]]
            records.append({"id": row["id"], "repo": repo, "half": half, "tree": name, "ranks": ranks})
    with (out / "ranks.jsonl").open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    tree_cost = {
        "tree": name,
        "instances": len(records),
        "chunks": cost.get("chunks"),
        "embedded": cost.get("embedded"),
        "index_and_embed_wall_s": round(embedded_at[0], 1),
        "index_and_embed_cpu_s": round(embedded_at[1], 1),
        "total_wall_s": round(time.perf_counter() - started, 1),
        "load": os.getloadavg(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    with (out / "trees.jsonl").open("a") as f:
        f.write(json.dumps(tree_cost) + "\n")
    return tree_cost


def run(data: Path, out: Path) -> int:
    """Every tree of the subset in the order of the first run (out/plan.json; the vector cache would change the
    counts of a resumed run), skipping trees already in out/ranks.jsonl; the tables after each tree."""
    from localization import tree_name

    out.mkdir(parents=True, exist_ok=True)
    if (out / "plan.json").exists():
        order = json.loads((out / "plan.json").read_text())
        print(f"resuming in the first run's order ({out / 'plan.json'})", flush=True)
    else:
        order = plan(data)
        (out / "plan.json").write_text(json.dumps(order, indent=1))
    halves, trees = _subset_trees(data)
    by_name = {tree_name(corpus): (corpus, instances) for corpus, instances in trees}
    done = {r["tree"] for r in read_records(out / "ranks.jsonl")}
    for t in order:
        if t["name"] in done:
            print(f"{t['name']}: done before, skipped", flush=True)
            continue
        print(
            f"{t['name']}: embedding up to {t['to_embed']} chunks ({time.strftime('%H:%M:%S')})", flush=True
        )
        cost = run_tree(*by_name[t["name"]], halves, out)
        print(f"{t['name']}: {json.dumps(cost)}", flush=True)
        report(out)
    return 0


def main() -> int:
    """Parse the flags; skip cleanly without the data file."""
    from localization import DEFAULT_DATA

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = Path(os.environ.get("LSP_AGENT_LOCALIZATION_DATA", DEFAULT_DATA))
    ap.add_argument("--data", type=Path, default=default)
    ap.add_argument(
        "--out", type=Path, help="results folder (ranks.jsonl, trees.jsonl, tables.txt, figures.json)"
    )
    ap.add_argument("--plan", action="store_true", help="only list the trees, chunks to embed and run order")
    ap.add_argument("--report", action="store_true", help="only print the figures of --out's ranks.jsonl")
    args = ap.parse_args()
    if not args.data.is_file():
        print(f"skipped: no benchmark data at {args.data} (pass --data or set LSP_AGENT_LOCALIZATION_DATA)")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.plan:
        plan(args.data)
        return 0
    if args.out is None:
        ap.error("--out DIR is needed to run or report")
    if args.report:
        report(args.out)
        return 0
    return run(args.data, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
