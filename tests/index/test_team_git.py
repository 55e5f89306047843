"""Laptops that are git checkouts join without reading the files git vouches for, to exactly a cold index."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_team_file import answers, assert_built_as_afresh, publish

from lsp_agent.index import IndexConfig, WorkspaceIndex, pipeline, team_file, tree_hashes
from lsp_agent.index.team_file import download, find_file
from lsp_agent.index.team_git import BLOB_TABLE, unmodified_blobs
from lsp_agent.index.team_store import TeamStore

ORIGIN = "https://git.example.com/team/shop.git"


def git(repo: Path, *args: str) -> str:
    """Run git in repo (a fixed identity, no user config) and return its output."""
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=CI", "-c", "user.email=ci@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def shop_git(shop_repo: Path) -> Path:
    """The shop as a git repository with one commit and an origin."""
    git(shop_repo, "init", "-q", "-b", "main")
    git(shop_repo, "add", "-A")
    git(shop_repo, "commit", "-q", "-m", "shop")
    git(shop_repo, "remote", "add", "origin", ORIGIN)
    return shop_repo


def settle(repo: Path) -> None:
    """Date the working files a minute back (git vouches only for files older than a moment) and let git see it."""
    past = time.time() - 60
    for path in repo.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            os.utime(path, (past, past))
    subprocess.run(["git", "-C", str(repo), "update-index", "-q", "--refresh"], check=False)


def clone(shop_git: Path, tmp_path: Path) -> Path:
    """A laptop's clone of the shop (same origin), with every kind of local change: cart.py edited,
    payments.py edited and staged, returns.py untracked, emails.py deleted; inventory.py as committed."""
    laptop = tmp_path / "laptop" / "shop"
    laptop.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(shop_git), str(laptop)], check=True)
    git(laptop, "remote", "set-url", "origin", ORIGIN)
    cart = laptop / "shop" / "cart.py"
    cart.write_text(cart.read_text() + "\n\ndef grand_total_with_tax(cart):\n    return cart.total * 1.2\n")
    payments = laptop / "shop" / "payments.py"
    payments.write_text(payments.read_text() + "\n\ndef refund_payment_twice(p):\n    return p\n")
    git(laptop, "add", "shop/payments.py")
    (laptop / "shop" / "returns.py").write_text("def refund_parcel(order):\n    return order.total\n")
    (laptop / "shop" / "emails.py").unlink()
    settle(laptop)
    return laptop


def read_while(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the join reads to hash them (the real reading, recorded)."""
    seen: list[str] = []
    real = tree_hashes._hashes

    def recording(paths: list[str]) -> list[str | None]:
        seen.extend(Path(p).name for p in paths)
        return real(paths)

    monkeypatch.setattr(tree_hashes, "_hashes", recording)
    return seen


def rows(db: Path) -> list[tuple]:
    """Every file's path and content hash, and every chunk's, of an index database."""
    conn = sqlite3.connect(db)
    try:
        files = conn.execute("SELECT path, hash FROM files ORDER BY path").fetchall()
        chunks = conn.execute(
            "SELECT f.path, c.start, c.end_line, c.hash FROM chunks c JOIN files f ON f.id = c.file_id "
            "ORDER BY 1, 2, 3, 4"
        ).fetchall()
        tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    finally:
        conn.close()
    return [files, chunks, BLOB_TABLE in tables]


def join_and_cold(laptop: Path, url: str, tmp_path: Path) -> tuple[WorkspaceIndex, WorkspaceIndex]:
    """The laptop joined from the team index and its cold local index, both refreshed."""
    joined = WorkspaceIndex(laptop, IndexConfig(store=url), db_path=tmp_path / "laptop.sqlite3")
    cold = WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3")
    joined.refresh()
    cold.refresh()
    return joined, cold


def test_a_clone_joins_reading_only_the_files_git_does_not_vouch_for(
    shop_git: Path,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    vouched = unmodified_blobs(laptop)
    assert sorted(vouched) == [
        ".gitignore",
        "README.md",
        "shop/__init__.py",
        "shop/inventory.py",
        "shop/payments.py",
    ]
    assert (
        vouched["shop/payments.py"] == git(laptop, "rev-parse", ":shop/payments.py").strip()
    )  # the staged blob
    assert vouched["shop/inventory.py"] == git(laptop, "rev-parse", "HEAD:shop/inventory.py").strip()
    seen = read_while(monkeypatch)
    caplog.set_level(logging.INFO, logger="lsp_agent.index")
    joined, cold = join_and_cold(laptop, pg_url, tmp_path)
    with joined, cold:
        assert "from snapshot file" in caplog.text
        # cart.py edited, returns.py untracked, payments.py staged (a blob the snapshot lacks): read; not the rest
        assert sorted(set(seen)) == ["cart.py", "payments.py", "returns.py"]
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)
        assert_built_as_afresh(joined)
        assert joined.search("refund_payment_twice", 1)[0].path == "shop/payments.py"


def test_files_git_cannot_vouch_for_are_read_and_the_join_stays_exact(
    shop_git: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    inventory = laptop / "shop" / "inventory.py"
    git(laptop, "update-index", "--assume-unchanged", "shop/inventory.py")  # git will not look at it
    inventory.write_text(inventory.read_text() + "\n\ndef restock_quietly(item):\n    return item\n")
    (laptop / ".gitattributes").write_text("__init__.py ident\n")  # checkout would rewrite $Id$
    settle(laptop)
    assert "shop/inventory.py" not in git(laptop, "diff-files", "--name-only")
    vouched = unmodified_blobs(laptop)
    assert "shop/inventory.py" not in vouched and "shop/__init__.py" not in vouched
    assert "README.md" in vouched
    seen = read_while(monkeypatch)
    joined, cold = join_and_cold(laptop, pg_url, tmp_path)
    with joined, cold:
        assert {"inventory.py", "__init__.py"} <= set(seen) and "README.md" not in seen
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)
        assert joined.search("restock_quietly", 1)[0].path == "shop/inventory.py"


def test_a_blob_the_snapshot_does_not_hold_is_read(shop_git: Path, pg_url: str, tmp_path: Path) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    inventory = laptop / "shop" / "inventory.py"
    inventory.write_text(inventory.read_text() + "\n\ndef committed_later(item):\n    return item\n")
    git(laptop, "commit", "-q", "-am", "a later commit the team index has not seen")
    settle(laptop)
    assert "shop/inventory.py" in unmodified_blobs(
        laptop
    )  # vouched for, but another blob than the snapshot's
    joined, cold = join_and_cold(laptop, pg_url, tmp_path)
    with joined, cold:
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)
        assert joined.search("committed_later", 1)[0].path == "shop/inventory.py"


@pytest.mark.parametrize("breakage", ["autocrlf", "broken-index", "no-git"])
def test_without_a_usable_git_every_file_is_read_and_the_join_is_the_same(
    shop_git: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    if breakage == "autocrlf":
        git(laptop, "config", "core.autocrlf", "true")
    elif breakage == "broken-index":
        (laptop / ".git" / "index").write_bytes(b"DIRC not an index")
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    assert unmodified_blobs(laptop) == {}
    seen = read_while(monkeypatch)
    joined, cold = join_and_cold(laptop, pg_url, tmp_path)
    with joined, cold:
        assert {"inventory.py", "README.md", "cart.py"} <= set(seen)
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)


def test_the_publisher_records_blob_ids_only_for_files_git_has_unmodified(
    shop_git: Path, pg_url: str, tmp_path: Path
) -> None:
    (shop_git / "shop" / "cart.py").write_text("def uncommitted_in_ci():\n    pass\n")
    (shop_git / "notes.py").write_text("def untracked_in_ci():\n    pass\n")
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = tmp_path / "fetched.sqlite3"
    team = TeamStore(pg_url)
    try:
        found = find_file(team, ORIGIN, None)
        assert found is not None
        download(team, found.snapshot, found.raw_bytes, laptop)
    finally:
        team.close()
    conn = sqlite3.connect(laptop)
    stored = {p: (b, s) for p, b, s in conn.execute(f"SELECT path, blob, size FROM {BLOB_TABLE}")}
    conn.close()
    assert {"README.md", "shop/__init__.py", "shop/inventory.py", "shop/payments.py"} <= set(stored)
    assert "shop/cart.py" not in stored and "notes.py" not in stored  # modified or untracked in CI
    assert stored["shop/payments.py"] == (
        git(shop_git, "rev-parse", "HEAD:shop/payments.py").strip(),
        (shop_git / "shop" / "payments.py").stat().st_size,
    )


def test_a_file_written_moments_before_git_looked_is_read(
    shop_git: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    readme = laptop / "README.md"
    readme.write_bytes(readme.read_bytes())  # the same bytes, just written: it could still be changing
    subprocess.run(["git", "-C", str(laptop), "update-index", "-q", "--refresh"], check=False)
    assert "README.md" in unmodified_blobs(laptop)  # git vouches for it...
    seen = read_while(monkeypatch)
    joined, cold = join_and_cold(laptop, pg_url, tmp_path)
    with joined, cold:
        assert "README.md" in seen and "inventory.py" not in seen  # ...but it is read all the same
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")


def analysed_ahead(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[], None] = lambda: None
) -> tuple[list, list]:
    """(the files the join analysed ahead, every file analysed), recorded; the download waits until the
    analyses ahead are done (as when it outlasts the walk), and `then` runs between the two."""
    ahead_done = threading.Event()
    ahead_paths: list[str] = []
    analysed: list[str] = []
    real_download, real_ahead, real_analyze = team_file.download, team_file.parse_ahead, pipeline.analyze

    def slow_download(*args: object) -> None:
        assert ahead_done.wait(60)
        real_download(*args)

    def recording_ahead(jobs: list, while_alive: threading.Thread, ahead: dict) -> int:
        done = real_ahead(jobs, while_alive, ahead)
        ahead_paths.extend(sorted(ahead))
        then()
        ahead_done.set()
        return done

    def recording_analyze(rel: str, text: str) -> object:
        analysed.append(rel)
        return real_analyze(rel, text)

    monkeypatch.setattr(team_file, "download", slow_download)
    monkeypatch.setattr(team_file, "parse_ahead", recording_ahead)
    monkeypatch.setattr(pipeline, "analyze", recording_analyze)
    return ahead_paths, analysed


def test_files_read_are_analysed_while_the_download_runs_and_not_again(
    shop_git: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    ahead, analysed = analysed_ahead(monkeypatch)
    joined = WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3")
    joined.refresh()
    # cart.py (edited) and returns.py (untracked) ahead; payments.py (staged: a blob the snapshot lacks) after
    assert ahead == ["shop/cart.py", "shop/returns.py"]
    assert sorted(analysed) == ["shop/cart.py", "shop/payments.py", "shop/returns.py"]
    cold = WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3")
    cold.refresh()
    with joined, cold:
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)
        assert_built_as_afresh(joined)
        assert joined.search("grand_total_with_tax", 1)[0].path == "shop/cart.py"


def test_a_file_changed_after_its_analysis_ahead_is_analysed_again(
    shop_git: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(shop_git, pg_url, tmp_path / "ci.sqlite3")
    laptop = clone(shop_git, tmp_path)
    cart = laptop / "shop" / "cart.py"
    ahead, analysed = analysed_ahead(
        monkeypatch, lambda: cart.write_text(cart.read_text() + "\n\ndef saved_meanwhile():\n    return 2\n")
    )
    joined = WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3")
    joined.refresh()
    assert ahead == ["shop/cart.py", "shop/returns.py"]
    assert sorted(analysed) == ["shop/cart.py", "shop/cart.py", "shop/payments.py", "shop/returns.py"]
    cold = WorkspaceIndex(laptop, IndexConfig(), db_path=tmp_path / "cold.sqlite3")
    cold.refresh()
    with joined, cold:
        assert rows(tmp_path / "laptop.sqlite3") == rows(tmp_path / "cold.sqlite3")
        assert answers(joined) == answers(cold)
        assert joined.search("saved_meanwhile", 1)[0].path == "shop/cart.py"
