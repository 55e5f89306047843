"""Laptops joining from a snapshot's SQLite file in a real PostgreSQL (pgserver): same answers, safe fallbacks."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex, team_file, team_transfer
from lsp_agent.index.lexical import LexicalIndex
from lsp_agent.index.lexical_state import chunk_postings
from lsp_agent.index.team_file import FILES_KEPT
from lsp_agent.index.team_store import TeamStore
from lsp_agent.index.team_sync import publish_index

QUERIES = [
    "cart total",
    "ShoppingCart.total_price",
    "refund payment",
    "grand_total_with_tax",
    "refund_parcel",
]


def publish(root: Path, url: str, db: Path) -> None:
    """Index `root` into its own local database and publish it (rows and snapshot file) to the team index."""
    team = TeamStore(url)
    try:
        team.create_schema()
        with WorkspaceIndex(root, IndexConfig(store=url), db_path=db) as index:
            index.refresh()
            assert publish_index(index, team).file
    finally:
        team.close()


def laptop_copy(shop_repo: Path, tmp_path: Path) -> Path:
    """The shop with local changes: cart.py edited, returns.py new, emails.py deleted."""
    laptop = tmp_path / "laptop" / "shop"
    shutil.copytree(shop_repo, laptop)
    cart = laptop / "shop" / "cart.py"
    cart.write_text(cart.read_text() + "\n\ndef grand_total_with_tax(cart):\n    return cart.total * 1.2\n")
    (laptop / "shop" / "returns.py").write_text("def refund_parcel(order):\n    return order.total\n")
    (laptop / "shop" / "emails.py").unlink()
    return laptop


def answers(index: WorkspaceIndex) -> list:
    """Every hit of every query (all of them: no cut among equal scores), order-free within a query."""
    out = []
    for query in QUERIES:
        out.append(
            sorted((h.path, h.start, h.end, h.symbol, round(h.score, 9)) for h in index.search(query, 100))
        )
        out.append(sorted((f.path, round(f.score, 9)) for f in index.locate(query, 100)))
    return out + [sorted((s.path, s.line) for s in index.find_symbol("ShoppingCart"))]


def assert_built_as_afresh(index: WorkspaceIndex) -> None:
    """The index's BM25 arrays are those of a build over its database's chunks, to the last bit."""
    conn = sqlite3.connect(index.db_path)
    fresh = LexicalIndex.from_postings(chunk_postings(conn))
    conn.close()
    ours = index._lexical
    assert ours is not None
    for name in ("_ids", "_terms", "_df", "_docs", "_indptr"):
        assert np.array_equal(getattr(ours, name), getattr(fresh, name)), name
    for column in range(len(fresh._terms)):  # weighed per term on demand: every term's weights, to the bit
        assert ours._weights(column)[1].tobytes() == fresh._weights(column)[1].tobytes()


def test_a_join_from_the_snapshot_file_answers_like_a_cold_index_of_the_same_tree(
    shop_repo: Path, pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    laptop = laptop_copy(shop_repo, tmp_path)
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    with (
        WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined,
        WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3") as cold,
    ):
        stats, cold_stats = joined.refresh(), cold.refresh()
        assert "from snapshot file" in caplog.text and "5 of 7 files match" in caplog.text
        assert stats.parsed == 2 and cold_stats.parsed == 7  # cart.py and returns.py; five from the file
        assert (stats.files, stats.chunks, stats.symbols) == (
            cold_stats.files,
            cold_stats.chunks,
            cold_stats.symbols,
        )
        caplog.set_level(logging.DEBUG, logger="lsp_agent.index.lexical_state")
        assert answers(joined) == answers(cold)
        assert "BM25 from the stored build" in caplog.text  # the snapshot's, updated with the 2 files
        assert_built_as_afresh(joined)
        assert joined.search("grand_total_with_tax", 1)[0].path == "shop/cart.py"  # the working copy wins
        assert all(h.path != "shop/emails.py" for h in joined.search("render_template email", 20))
        (laptop / "shop" / "late.py").write_text("def arrived_after_the_join():\n    pass\n")
        assert joined.refresh().parsed == 1  # an adopted index refreshes like any other
        assert joined.search("arrived_after_the_join", 1)[0].path == "shop/late.py"
    assert not list(tmp_path.glob("laptop.sqlite3.team*"))  # no download left behind


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE lsp_snapshot_parts SET data = substring(data from 1 for length(data) / 2)",  # cut short
        "UPDATE lsp_snapshot_parts SET data = overlay(data placing '\\x00ff00ff00ff'::bytea from 200)",
        "UPDATE lsp_snapshot_dbs SET raw_bytes = raw_bytes + 4096",  # whole, but not what the indexer wrote
    ],
    ids=["truncated", "corrupt-bytes", "size"],
)
def test_a_damaged_snapshot_file_falls_back_to_the_rows_with_the_same_answers(
    shop_repo: Path, pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(damage).rowcount == 1  # type: ignore[arg-type]
    laptop = laptop_copy(shop_repo, tmp_path)
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    with (
        WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined,
        WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3") as cold,
    ):
        stats = joined.refresh()
        cold.refresh()
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("copying the team's rows instead" in w for w in warnings), warnings
        assert "from snapshot file" not in caplog.text
        assert stats.parsed == 2  # the five matching files still came from the team (as rows)
        assert answers(joined) == answers(cold)
        assert joined.team is not None and joined.team.status is None  # the team index itself is fine
    assert not list(tmp_path.glob("laptop.sqlite3.team*"))


def test_a_tree_that_matches_little_of_the_snapshot_copies_rows(
    shop_repo: Path, pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    other = tmp_path / "elsewhere" / "shop"  # the same name, mostly other files
    other.mkdir(parents=True)
    shutil.copy(shop_repo / "shop" / "cart.py", other / "cart.py")  # another path: another file key
    for n in range(3):
        (other / f"mod{n}.py").write_text(f"def function_{n}():\n    return {n}\n")
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    with WorkspaceIndex(other, IndexConfig(store=pg_url), db_path=tmp_path / "other.sqlite3") as index:
        assert index.refresh().parsed == 4
        assert "matches 0 of 4 files: copying rows" in caplog.text
        assert [h.path for h in index.search("function_2", 1)] == ["mod2.py"]
        assert index.stats().files == 4


def test_only_the_newest_snapshot_files_of_a_repository_are_kept(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    for n in range(FILES_KEPT + 1):  # four commits of the same repository (a tree each: no git)
        (shop_repo / "shop" / "release.py").write_text(f"RELEASE = {n}\n")
        publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        snapshots = conn.execute("SELECT count(*) FROM lsp_snapshots WHERE complete").fetchone()
        kept = conn.execute("SELECT snapshot_id FROM lsp_snapshot_dbs ORDER BY snapshot_id").fetchall()
        parts = conn.execute("SELECT DISTINCT snapshot_id FROM lsp_snapshot_parts ORDER BY 1").fetchall()
        newest = conn.execute("SELECT id FROM lsp_snapshots ORDER BY id DESC LIMIT 3").fetchall()
    assert snapshots == (FILES_KEPT + 1,)  # every snapshot stays; only the oldest file went, with its parts
    assert kept == parts == sorted(newest)
    laptop = laptop_copy(shop_repo, tmp_path)
    with WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined:
        assert joined.refresh().parsed == 2
        assert joined.search("RELEASE", 1)[0].path == "shop/release.py"


OPENER = (  # another process opening the laptop's index: argv database; prints once started, then the file count
    "import sys; from pathlib import Path; from lsp_agent.index.store import IndexStore; print('opening', flush=True); "
    "store = IndexStore(Path(sys.argv[1])); print(store.conn.execute('SELECT count(*) FROM files').fetchone()[0])"
)


def test_a_process_opening_the_index_during_the_swap_waits_and_opens_the_joined_file(
    shop_repo: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    laptop = laptop_copy(shop_repo, tmp_path)
    replace = os.replace
    seen: dict = {}

    def swap_while_another_process_opens(src: str, dst: str) -> None:
        """Between the check and the swap, a second process starts opening the (still empty) index."""
        child = subprocess.Popen(
            [sys.executable, "-c", OPENER, str(dst)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        assert child.stdout is not None and child.stdout.readline() == "opening\n"
        time.sleep(1.5)  # far longer than opening takes, had nothing held it
        seen["waited"] = child.poll() is None
        replace(src, dst)
        seen["child"] = child

    monkeypatch.setattr(team_file.os, "replace", swap_while_another_process_opens)
    with WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined:
        stats = joined.refresh()
        monkeypatch.undo()
        out, _ = seen["child"].communicate(timeout=60)
        assert seen["waited"] and seen["child"].returncode == 0
        published = sqlite3.connect(tmp_path / "ci.sqlite3").execute("SELECT count(*) FROM files").fetchone()
        assert int(out.split()[-1]) == published[0] > 0  # it opened the snapshot's file, not the empty index
        assert stats.parsed == 2
        assert joined.search("grand_total_with_tax", 1)[0].path == "shop/cart.py"


def rewrite_as_one_stream(url: str, row_bytes: int) -> int:
    """Store the snapshot file again as earlier versions did: one zstd stream cut into rows; returns the rows."""
    import zstandard

    with psycopg.connect(url, autocommit=True) as conn:
        snapshot, *_ = conn.execute("SELECT snapshot_id FROM lsp_snapshot_dbs").fetchone()  # type: ignore[misc]
        frames = [bytes(d) for (d,) in conn.execute("SELECT data FROM lsp_snapshot_parts ORDER BY part")]
        raw = b"".join(zstandard.ZstdDecompressor().decompress(f) for f in frames)
        stream = zstandard.ZstdCompressor(level=3, write_checksum=True).compressobj()
        data = stream.compress(raw) + stream.flush()
        conn.execute("DELETE FROM lsp_snapshot_parts")
        rows = [data[i : i + row_bytes] for i in range(0, len(data), row_bytes)]
        for n, row in enumerate(rows):
            conn.execute("INSERT INTO lsp_snapshot_parts VALUES(%s,%s,%s)", (snapshot, n, row))
    return len(rows)


@pytest.mark.parametrize("layout", ["many-frames", "one-stream-of-earlier-versions"])
def test_a_snapshot_file_in_many_frames_or_one_old_stream_joins_alike(
    shop_repo: Path,
    pg_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    layout: str,
) -> None:
    monkeypatch.setattr(team_transfer, "FRAME_BYTES", 4096)  # the shop's file in a few dozen frames
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url) as conn:
        frames = conn.execute("SELECT count(*) FROM lsp_snapshot_parts").fetchone()[0]  # type: ignore[index]
    assert frames > 2 * team_transfer.IN_FLIGHT  # more than the threads hold at once
    if layout != "many-frames":
        assert rewrite_as_one_stream(pg_url, 2000) > 3
    laptop = laptop_copy(shop_repo, tmp_path)
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    with (
        WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined,
        WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3") as cold,
    ):
        assert joined.refresh().parsed == 2
        cold.refresh()
        assert "from snapshot file" in caplog.text
        assert answers(joined) == answers(cold)


def test_a_snapshot_file_missing_a_frame_falls_back_to_the_rows(
    shop_repo: Path,
    pg_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(team_transfer, "FRAME_BYTES", 4096)
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("DELETE FROM lsp_snapshot_parts WHERE part = 3").rowcount == 1
    laptop = laptop_copy(shop_repo, tmp_path)
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    with (
        WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as joined,
        WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3") as cold,
    ):
        assert joined.refresh().parsed == 2
        cold.refresh()
        assert "is incomplete" in caplog.text and "from snapshot file" not in caplog.text
        assert answers(joined) == answers(cold)


def test_a_download_stopped_by_a_damaged_frame_leaves_the_connection_usable(
    shop_repo: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(team_transfer, "FRAME_BYTES", 4096)
    publish(shop_repo, pg_url, tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE lsp_snapshot_parts SET data = substring(data from 1 for 20) WHERE part = 2")
    team = TeamStore(pg_url)
    try:
        found = team_file.find_file(team, "shop", None)
        assert found is not None
        with pytest.raises(team_transfer.SnapshotFileError) as failure:
            team_transfer.download(team, found.snapshot, found.raw_bytes, tmp_path / "dl")
        kept = failure.value  # as a log record keeps it, with its traceback and the download's frames
        answer: list = []
        probe = threading.Thread(
            target=lambda: answer.append(team.conn.execute("SELECT 1").fetchone()), daemon=True
        )
        probe.start()
        probe.join(20)
        assert answer == [(1,)], "the connection is still held by the stopped download"
        assert kept is not None
    finally:
        team.close()
