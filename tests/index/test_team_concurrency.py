"""Several indexers writing one team index at once, and one killed mid-way (real PostgreSQL, real processes)."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.team_store import TeamStore

REPO = Path(__file__).resolve().parents[2]


def lsp_agent(*args: str, cache: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`lsp-agent ARGS` in a subprocess with its own cache folder."""
    env = {"XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "lsp_agent", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def make_tree(root: Path, files: int, version: int = 1) -> Path:
    """A project of `files` distinct Python modules (module i of version 2 differs when i is even)."""
    for i in range(files):
        changed = version > 1 and i % 2 == 0
        body = "\n".join(
            f"def handler_{i}_{j}{'_v2' if changed else ''}(request, limit={j}):\n"
            f"    '''Handle request kind {j} of module {i}.'''\n"
            f"    return [item for item in request.items if item.size < limit * {i + 1}]\n"
            for j in range(6)
        )
        path = root / f"pkg{i % 20}" / f"module_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"class Service{i}:\n    name = 'service {i}'\n\n\n{body}\n")
    return root


def rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()  # type: ignore[arg-type]


def test_two_indexers_at_once_write_each_file_once_and_one_snapshot(pg_url: str, tmp_path: Path) -> None:
    first = make_tree(tmp_path / "a" / "proj", 400)
    second = tmp_path / "b" / "proj"
    shutil.copytree(first, second)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "index", str(tree), "--store", pg_url, "--no-progress"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={
                "XDG_CACHE_HOME": str(tmp_path / f"cache{n}"),
                "PYTHONPATH": str(REPO),
                "PATH": "/usr/bin:/bin",
            },
        )
        for n, tree in enumerate((first, second))
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
        assert "snapshot proj@tree-" in out
    assert rows(pg_url, "SELECT count(*), count(DISTINCT key) FROM lsp_files") == [(400, 400)]
    chunks = rows(pg_url, "SELECT count(*) FROM lsp_chunks")[0][0]
    assert chunks == 400 * 7  # a class and six functions per module, each stored once
    snapshots = rows(pg_url, "SELECT complete, files FROM lsp_snapshots")
    assert snapshots == [(True, 400)]  # the later indexer found the commit published and dropped its own row


def test_an_indexer_killed_mid_way_leaves_the_last_complete_snapshot_serving(
    pg_url: str, tmp_path: Path
) -> None:
    v1 = make_tree(tmp_path / "v1" / "proj", 600)
    done = lsp_agent("index", str(v1), "--store", pg_url, "--no-progress", cache=tmp_path / "c1")
    assert done.returncode == 0, done.stderr
    v2 = make_tree(tmp_path / "v2" / "proj", 2400, version=2)
    indexer = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "index", str(v2), "--store", pg_url, "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"XDG_CACHE_HOME": str(tmp_path / "c2"), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    deadline = time.monotonic() + 240
    while rows(pg_url, "SELECT count(*) FROM lsp_files")[0][0] <= 600:  # the first upload batch committed
        assert indexer.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    indexer.send_signal(signal.SIGKILL)
    indexer.wait(timeout=30)
    assert rows(pg_url, "SELECT complete FROM lsp_snapshots ORDER BY id") == [(True,), (False,)]
    stored = rows(pg_url, "SELECT count(*) FROM lsp_files")[0][0]
    assert 600 < stored < 600 + 2100  # some of v2's 2100 new files (each whole, with its chunks), not all
    assert rows(
        pg_url,
        "SELECT count(*) FROM lsp_files f WHERE NOT EXISTS "
        "(SELECT 1 FROM lsp_chunks c WHERE c.file_key = f.key)",
    ) == [(0,)]
    team = TeamStore(pg_url)
    try:
        served = team.snapshot("proj")
        assert served is not None and served.files == 600  # v1 still serves
    finally:
        team.close()
    laptop = tmp_path / "laptop" / "proj"
    shutil.copytree(v1, laptop)
    with WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as index:
        assert index.refresh().parsed == 0
        assert index.search("handler_5_3", 1)[0].path == "pkg5/module_5.py"
    again = lsp_agent(
        "index", str(v2), "--store", pg_url, "--no-progress", cache=tmp_path / "c3", timeout=300
    )
    assert again.returncode == 0, again.stderr
    reused = int(re.search(r"(\d+) already stored", again.stdout).group(1))  # type: ignore[union-attr]
    assert reused == 300 + (stored - 600)  # v1's 300 files v2 keeps, and every file the killed indexer wrote
