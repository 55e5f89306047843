"""SQLite persistence: cache location, incremental refresh, crash safety, cancellation, threads."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex, pipeline
from lsp_agent.index.store import default_db_path

REPO = Path(__file__).resolve().parents[2]


def _table_counts(db: Path) -> tuple[int, ...]:
    conn = sqlite3.connect(db)
    try:
        return tuple(
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("files", "chunks", "symbols")
        )
    finally:
        conn.close()


def test_database_lives_in_the_cache_not_the_workspace(shop_repo: Path) -> None:
    with WorkspaceIndex(shop_repo) as index:
        stats = index.refresh()
        cache = Path(os.environ["XDG_CACHE_HOME"]) / "lsp-agent"
        assert index.db_path == default_db_path(shop_repo)
        assert index.db_path.is_relative_to(cache) and index.db_path.exists()
        assert not any(p.suffix.startswith(".sqlite") for p in shop_repo.rglob("*"))
    assert (stats.files, stats.parsed) == (7, 7)
    assert stats.chunks > 15 and stats.symbols > 25  # definitions


def test_unchanged_files_are_not_reparsed_across_processes(shop_repo: Path) -> None:
    with WorkspaceIndex(shop_repo) as index:
        first = index.refresh()
    with WorkspaceIndex(shop_repo) as index:  # a new instance reads the same database
        again = index.refresh()
        assert index.search("Luhn checksum")[0].symbol == "validate_card_number"
    assert again.parsed == 0
    assert (again.files, again.chunks, again.symbols) == (first.files, first.chunks, first.symbols)


def test_changed_touched_and_deleted_files(shop_index: WorkspaceIndex, shop_repo: Path) -> None:
    cart = shop_repo / "shop" / "cart.py"
    cart.write_text(
        cart.read_text() + "\n\ndef split_bill_evenly(total, people):\n    return total / people\n"
    )
    stats = shop_index.refresh()
    assert stats.parsed == 1
    assert shop_index.search("split the bill evenly")[0].symbol == "split_bill_evenly"

    # Same content, new mtime: hashed, not parsed.
    inventory = shop_repo / "shop" / "inventory.py"
    st = inventory.stat()
    os.utime(inventory, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert shop_index.refresh().parsed == 0

    (shop_repo / "shop" / "payments.py").unlink()
    stats = shop_index.refresh()
    assert stats.files == 6 and stats.parsed == 0
    assert all(h.path != "shop/payments.py" for h in shop_index.search("card payment refund charge"))
    assert shop_index.find_symbol("validate_card_number") == []


def test_gitignored_hidden_binary_and_oversize_files_are_skipped(shop_repo: Path) -> None:
    (shop_repo / "debug.log").write_text("def logged(): pass\n")
    (shop_repo / ".cache").mkdir()
    (shop_repo / ".cache" / "hidden.py").write_text("def hidden(): pass\n")
    (shop_repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (shop_repo / "big.py").write_text("def big_one():\n" + "    x = 1\n" * 500)
    with WorkspaceIndex(shop_repo, IndexConfig(max_file_size=3000, exclude=["README.md"])) as index:
        index.refresh()
        paths = {
            r[0] for r in index._reader.conn.execute("SELECT path FROM files WHERE language != 'binary'")
        }
    assert paths == {
        ".gitignore",
        "shop/__init__.py",
        "shop/cart.py",
        "shop/emails.py",
        "shop/inventory.py",
        "shop/payments.py",
    }


def test_exception_mid_refresh_leaves_previous_state(shop_index: WorkspaceIndex, shop_repo: Path) -> None:
    before = _table_counts(shop_index.db_path)
    for name in ("cart.py", "inventory.py", "emails.py"):
        path = shop_repo / "shop" / name
        path.write_text(path.read_text() + "\n\ndef extra_function_added():\n    return 1\n")
    (shop_repo / "shop" / "payments.py").unlink()
    calls = []

    def explode(done: int, total: int, rel: str) -> None:
        calls.append(rel)
        if len(calls) == 2:
            raise RuntimeError("simulated crash")

    with pytest.raises(RuntimeError, match="simulated crash"):
        shop_index.refresh(progress=explode)
    assert _table_counts(shop_index.db_path) == before
    assert shop_index.find_symbol("extra_function_added") == []
    assert shop_index.find_symbol("validate_card_number")  # the deletion was rolled back too
    stats = shop_index.refresh()  # and the next refresh completes the work
    assert stats.parsed == 3 and stats.files == 6
    assert len([s for s in shop_index.find_symbol("extra_function_added") if s.role == "definition"]) == 3


def test_cancel_keeps_finished_files(shop_repo: Path) -> None:
    cancel = threading.Event()
    seen: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, rel: str) -> None:
        seen.append((done, total, rel))
        if done == 3:
            cancel.set()

    with WorkspaceIndex(shop_repo) as index:
        stats = index.refresh(progress=progress, cancel=cancel)
        assert stats.files == 3 and [s[0] for s in seen] == [1, 2, 3] and seen[0][1] == 7
        assert index.refresh().parsed == 4


def test_parallel_workers_give_the_same_index(shop_repo: Path, monkeypatch) -> None:
    with WorkspaceIndex(shop_repo, db_path=shop_repo.parent / "serial.db") as index:
        serial = index.refresh()
        serial_rows = sorted(
            index._reader.conn.execute("SELECT start, end_line, symbol, kind, length FROM chunks")
        )
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(pipeline, "JOBS_PER_TASK", 2)
    monkeypatch.setattr(pipeline, "worker_count", lambda: 2)
    with WorkspaceIndex(shop_repo, db_path=shop_repo.parent / "parallel.db") as index:
        parallel = index.refresh()
        rows = sorted(index._reader.conn.execute("SELECT start, end_line, symbol, kind, length FROM chunks"))
    assert (parallel.files, parallel.chunks, parallel.symbols) == (
        serial.files,
        serial.chunks,
        serial.symbols,
    )
    assert rows == serial_rows


def test_worker_niceness_belongs_to_each_index() -> None:
    # a background index (the language server's) lowers its workers' priority; no other index is affected
    base = os.nice(0)
    with (
        pipeline.Workers(IndexConfig(worker_niceness=5).worker_niceness) as background,
        pipeline.Workers() as cli,
    ):
        background.count = cli.count = 2
        background.start()
        cli.start()
        assert background.pool is not None and cli.pool is not None
        assert background.pool.submit(os.nice, 0).result() == min(base + 5, 19)
        assert cli.pool.submit(os.nice, 0).result() == base
    assert IndexConfig().worker_niceness == 0


def test_concurrent_searches_and_updates(shop_index: WorkspaceIndex) -> None:
    errors: list[BaseException] = []

    def searcher() -> None:
        try:
            for _ in range(30):
                assert shop_index.search("stock levels")
                shop_index.find_symbol("Inventory")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer() -> None:
        try:
            for i in range(15):
                shop_index.update_file("shop/extra.py", f"def generated_{i}():\n    return {i}\n")
            shop_index.refresh()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    # The buffer never reached the disk, so the refresh dropped it.
    assert shop_index.find_symbol("generated_14") == []


def test_buffer_update_is_persisted_and_replaced_by_disk_on_refresh(
    shop_index: WorkspaceIndex, shop_repo: Path
) -> None:
    shop_index.update_file("shop/emails.py", "def draft_newsletter():\n    return 'hi'\n")
    with WorkspaceIndex(shop_repo) as other:
        assert [s.qualified_name for s in other.find_symbol("draft_newsletter")] == ["draft_newsletter"]
    stats = shop_index.refresh()  # disk still has the original: the buffer version is replaced
    assert stats.parsed == 1
    assert shop_index.find_symbol("draft_newsletter") == []


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="workspace folder not found"):
        WorkspaceIndex(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(NotADirectoryError):
        WorkspaceIndex(tmp_path / "file.txt")


def test_edit_rewrites_only_changed_chunks_and_keeps_rows_consistent(shop_index: WorkspaceIndex) -> None:
    from lsp_agent.index.chunking import analyze

    conn = shop_index._reader.conn
    rel = "shop/cart.py"

    def stored():
        chunks = conn.execute(
            "SELECT c.id, c.start, c.end_line, c.symbol, c.text FROM chunks c JOIN files f ON f.id=c.file_id "
            "WHERE f.path=? ORDER BY c.start",
            (rel,),
        ).fetchall()
        symbols = conn.execute(
            "SELECT name, qualified_name, kind, line, end_line FROM symbols s JOIN files f ON f.id=s.file_id "
            "WHERE f.path=?",
            (rel,),
        ).fetchall()
        return chunks, sorted(symbols, key=repr)

    before, _ = stored()
    text = (shop_index.root / rel).read_text()
    edited = "# a new first line\n" + text.replace("return gross * (1 - self.discount)", "return gross")
    shop_index.update_file(rel, edited)
    after, symbols = stored()
    fresh = analyze(rel, edited)
    assert [(c[1], c[2], c[3], c[4]) for c in after] == [
        (c.start, c.end, c.symbol, c.text) for c in fresh.chunks
    ]
    assert symbols == sorted(
        ((s.name, s.qualified_name, s.kind, s.line, s.end_line) for s in fresh.symbols), key=repr
    )
    kept = {c[0] for c in before} & {c[0] for c in after}
    changed = [c for c in after if c[0] not in kept]
    # Only the module header (new comment) and total_price changed text; the other chunks kept their rows.
    assert {c[3] for c in changed} == {None, "ShoppingCart.total_price"}
    assert len(kept) == len(after) - len(changed) >= 4


KILL_MID_REFRESH = """
import os, signal, sys
from lsp_agent.index import WorkspaceIndex

def progress(done, total, rel):
    if done == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)

WorkspaceIndex(sys.argv[1]).refresh(progress=progress)
"""


def test_killed_process_mid_refresh_leaves_a_sound_previous_index(tmp_path: Path) -> None:
    repo = tmp_path / "many"
    (repo / "pkg").mkdir(parents=True)
    for i in range(120):
        (repo / "pkg" / f"mod_{i}.py").write_text(f"def old_function_{i}(x):\n    return x + {i}\n" * 20)
    with WorkspaceIndex(repo) as index:
        before = index.refresh()
        db = index.db_path
    for i in range(120):
        (repo / "pkg" / f"mod_{i}.py").write_text(f"def new_function_{i}(x):\n    return x - {i}\n" * 30)
    (repo / "pkg" / "mod_0.py").unlink()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-c", KILL_MID_REFRESH, str(repo), "80"], env=env, capture_output=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert _table_counts(db) == (before.files, before.chunks, before.symbols)
    with WorkspaceIndex(repo) as index:
        assert index.find_symbol("new_function_5") == []
        assert index.find_symbol("old_function_0")  # the deletion never landed either
        after = index.refresh()
        assert (after.files, after.parsed) == (119, 119)
        assert index.find_symbol("old_function_5") == []
        assert index.search("new_function_5", top_k=1)[0].path == "pkg/mod_5.py"


def test_binary_files_are_remembered_not_indexed(shop_repo: Path) -> None:
    (shop_repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 40)
    with WorkspaceIndex(shop_repo) as index:
        first: list[str] = []
        stats = index.refresh(progress=lambda done, total, rel: first.append(rel))
        assert "logo.png" in first and stats.files == 7  # not counted as an indexed file
        again: list[str] = []
        assert index.refresh(progress=lambda done, total, rel: again.append(rel)).parsed == 0
        assert again == []  # unchanged size and mtime: not even read
        assert "logo.png" not in index.repo_map()
        (shop_repo / "logo.png").write_text("def no_longer_binary():\n    return 1\n")
        assert index.refresh().files == 8
        assert index.search("no_longer_binary", top_k=1)[0].path == "logo.png"


def test_nested_gitignore_and_escaping_symlinks(shop_repo: Path, tmp_path: Path) -> None:
    (shop_repo / "shop" / ".gitignore").write_text("generated_*.py\n!generated_keep.py\n")
    (shop_repo / "shop" / "generated_models.py").write_text("def generated_model():\n    pass\n")
    (shop_repo / "shop" / "generated_keep.py").write_text("def generated_keeper():\n    pass\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def outside_secret():\n    pass\n")
    (shop_repo / "linked_dir").symlink_to(outside, target_is_directory=True)
    (shop_repo / "linked_file.py").symlink_to(outside / "secret.py")
    (shop_repo / "inside_link.py").symlink_to(shop_repo / "shop" / "emails.py")
    with WorkspaceIndex(shop_repo) as index:
        index.refresh()
        paths = {r[0] for r in index._reader.conn.execute("SELECT path FROM files")}
        assert "shop/generated_keep.py" in paths and "shop/generated_models.py" not in paths
        assert not any("linked" in p for p in paths)
        assert index.find_symbol("outside_secret") == []
        assert "inside_link.py" in paths  # a link that stays inside the root is a file like any other


def test_a_corrupt_cache_database_is_rebuilt(shop_repo: Path) -> None:
    db = default_db_path(shop_repo)
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not an SQLite database, it is a damaged cache file" * 100)
    with WorkspaceIndex(shop_repo) as index:
        assert index.refresh().parsed == 7
        assert index.search("Luhn checksum")[0].symbol == "validate_card_number"


def test_an_index_of_an_older_schema_is_rebuilt(shop_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(db)
    conn.executescript(  # schema 7: references stored as symbol rows, no identifiers column
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('schema', '7');"
        "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL,"
        " mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL, language TEXT NOT NULL);"
        "INSERT INTO files VALUES(1, 'shop/cart.py', 1, 1, 'x', 'python');"
        "CREATE TABLE symbols(file_id INTEGER NOT NULL, name TEXT NOT NULL, qualified_name TEXT,"
        " role TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL);"
    )
    conn.close()
    with WorkspaceIndex(shop_repo, db_path=db) as index:
        stats = index.refresh()
        assert (stats.files, stats.parsed) == (7, 7)  # nothing of the old index was trusted
        assert [h.path for h in index.find_symbol("ShoppingCart") if h.role == "definition"] == [
            "shop/cart.py"
        ]
    with sqlite3.connect(db) as check:
        columns = {row[1] for row in check.execute("PRAGMA table_info(symbols)")}
    assert "role" not in columns
