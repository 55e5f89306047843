"""Query latency from N concurrent client processes over one index (used by team_index.py).

    python benchmarks/team_clients.py TREE DB STORE GO_DIR N QUERIES_JSON   (one client; the parent starts N)

Each client opens the index (STORE: a postgresql:// URL or "sqlite"), runs one query of each kind to build its
rankers outside the timing, says it is ready and waits until every client is, then runs every query three times
as `search` and as `search --files`, and prints the milliseconds of each call as JSON.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def client(tree: Path, db: Path, store: str, go: Path, n: int, queries: list[str]) -> dict:
    """One client's timings: {"search": [ms...], "files": [ms...]}."""
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    index = WorkspaceIndex(tree, IndexConfig(store=None if store == "sqlite" else store), db_path=db)
    calls = {"search": index.search, "files": index.locate}
    for call in calls.values():
        call(queries[0], 10)
    (go / f"ready-{n}").touch()
    while not (go / "go").exists():
        time.sleep(0.01)
    out: dict[str, list[float]] = {name: [] for name in calls}
    for query in queries * 3:
        for name, call in calls.items():
            started = time.perf_counter()
            call(query, 10)
            out[name].append((time.perf_counter() - started) * 1000)
    index.close()
    return out


def concurrent(tree: Path, db: Path, store: str, clients: int, queries: list[str], work: Path) -> dict:
    """p50/p95 ms of search and search --files with `clients` processes querying at once."""
    go = work / f"go-{store[:6]}-{clients}"
    go.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(work / "clients-cache")}
    args = [str(tree), str(db), store, str(go)]
    runs = [
        subprocess.Popen(
            [sys.executable, __file__, *args, str(n), json.dumps(queries)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(clients)
    ]
    while len(list(go.glob("ready-*"))) < clients:
        if any(run.poll() not in (None, 0) for run in runs):
            raise SystemExit(f"a client failed: {runs[0].stderr.read()[-2000:] if runs[0].stderr else ''}")
        time.sleep(0.05)
    (go / "go").touch()
    times: dict[str, list[float]] = {"search": [], "files": []}
    for run in runs:
        out, err = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"a client failed: {err[-2000:]}")
        for name, values in json.loads(out.splitlines()[-1]).items():
            times[name].extend(values)
    return {
        name: {
            "p50_ms": round(statistics.median(v), 1),
            "p95_ms": round(sorted(v)[int(len(v) * 0.95) - 1], 1),
            "calls": len(v),
        }
        for name, v in times.items()
    }


if __name__ == "__main__":
    tree, db, store, go, n, queries = sys.argv[1:7]
    print(json.dumps(client(Path(tree), Path(db), store, Path(go), int(n), json.loads(queries))))
