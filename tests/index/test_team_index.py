"""The team index on a real PostgreSQL with pgvector (pgserver): same rankings as SQLite, seeding, snapshots."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.team_store import TeamStore
from lsp_agent.index.team_sync import publish_index
from lsp_agent.testing.scripted_model import ScriptedModelServer, hashed_embedding

REPO = Path(__file__).resolve().parents[2]
QUERIES = [
    "cart total",
    "ShoppingCart.total_price",
    "send the order confirmation email",
    "refund payment",
    "where are discounts applied",
    "shop/payments.py charge card",
]


def lsp_agent(*args: str, cache: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`lsp-agent ARGS` in a subprocess with its own cache folder."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def published(root: Path, url: str, config: IndexConfig | None = None, db: Path | None = None) -> None:
    """Index `root` into its own local database and publish it to the team index."""
    config = config or IndexConfig(store=url)
    team = TeamStore(url)
    try:
        team.create_schema()
        with WorkspaceIndex(root, config, db_path=db) as index:
            index.refresh()
            publish_index(index, team)
    finally:
        team.close()


def test_search_and_files_rank_the_same_from_either_store(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    done = lsp_agent("index", str(shop_repo), "--store", pg_url, "--no-progress", cache=tmp_path / "ci")
    assert done.returncode == 0, done.stderr
    assert "snapshot shop@tree-" in done.stdout and "(7 files, 0 already stored)" in done.stdout
    assert "with its SQLite file for laptops to join from" in done.stdout
    for query in QUERIES:
        for mode in ([], ["--files"]):
            args = ("search", query, "--repo", str(shop_repo), "--json", "--top-k", "8", *mode)
            local = lsp_agent(*args, cache=tmp_path / f"local{len(mode)}")
            team = lsp_agent(*args, "--store", pg_url, cache=tmp_path / f"team{len(mode)}")
            assert local.returncode == team.returncode == 0, local.stderr + team.stderr
            assert json.loads(team.stdout) == json.loads(local.stdout) != []


def test_a_seeded_index_parses_nothing_and_answers_like_a_local_one(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    published(shop_repo, pg_url, db=tmp_path / "ci.sqlite3")
    with (
        WorkspaceIndex(shop_repo, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as seeded,
        WorkspaceIndex(shop_repo, IndexConfig(), db_path=tmp_path / "local.sqlite3") as local,
    ):
        stats, cold = seeded.refresh(), local.refresh()
        assert stats.parsed == 0 and cold.parsed == 7
        assert (stats.files, stats.chunks, stats.symbols) == (cold.files, cold.chunks, cold.symbols)
        for query in QUERIES:
            assert seeded.search(query, 10) == local.search(query, 10)
            assert seeded.locate(query, 10) == local.locate(query, 10)
        assert seeded.find_symbol("ShoppingCart") == local.find_symbol("ShoppingCart")
        assert seeded.repo_map(2000) == local.repo_map(2000)


def test_local_changes_over_a_shared_snapshot_win(shop_repo: Path, pg_url: str, tmp_path: Path) -> None:
    published(shop_repo, pg_url, db=tmp_path / "ci.sqlite3")
    laptop = tmp_path / "laptop" / "shop"
    shutil.copytree(shop_repo, laptop)
    cart = laptop / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace("def total_price", "def grand_total_with_tax"))
    (laptop / "shop" / "returns.py").write_text("def refund_parcel(order):\n    return order.total\n")
    (laptop / "shop" / "emails.py").unlink()
    with WorkspaceIndex(laptop, IndexConfig(store=pg_url), db_path=tmp_path / "laptop.sqlite3") as index:
        stats = index.refresh()
        assert stats.parsed == 2  # cart.py (changed) and returns.py (new); the other five came from the team
        assert index.search("grand_total_with_tax", 1)[0].path == "shop/cart.py"
        assert index.search("refund_parcel", 1)[0].path == "shop/returns.py"
        assert all(h.symbol != "ShoppingCart.total_price" for h in index.search("total_price", 20))
        assert all(h.path != "shop/emails.py" for h in index.search("render_template email", 20))
        assert index.find_symbol("ShoppingCart")[0].path == "shop/cart.py"


def test_an_unreachable_database_leaves_the_local_index_serving_with_one_warning(
    shop_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = "postgresql://alice:s3cret-pw@127.0.0.1:1/team?connect_timeout=2"
    caplog.set_level(logging.DEBUG)
    with WorkspaceIndex(shop_repo, IndexConfig(store=url), db_path=tmp_path / "x.sqlite3") as index:
        assert index.refresh().parsed == 7
        (shop_repo / "shop" / "new.py").write_text("def fresh_function():\n    pass\n")
        assert index.refresh().parsed == 1
        assert index.search("fresh_function", 1)[0].path == "shop/new.py"
        assert index.team is not None and "unreachable" in (index.team.status or "")
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert (
        "alice@127.0.0.1:1/team is unreachable" in warnings[0] and "using the local index only" in warnings[0]
    )
    assert "s3cret-pw" not in caplog.text


def test_the_password_never_appears_in_output_or_errors(shop_repo: Path, tmp_path: Path) -> None:
    url = "postgresql://alice:s3cret-pw@127.0.0.1:1/team?sslmode=prefer&connect_timeout=2"
    done = lsp_agent("index", str(shop_repo), "--store", url, "--log-level", "DEBUG", cache=tmp_path / "a")
    assert done.returncode == 1
    assert "unreachable" in done.stderr and "alice@127.0.0.1:1/team" in done.stderr
    found = lsp_agent(
        "search",
        "cart",
        "--repo",
        str(shop_repo),
        "--store",
        url,
        "--log-level",
        "DEBUG",
        cache=tmp_path / "b",
    )
    assert found.returncode == 0 and "shop/cart.py" in found.stdout
    bad = lsp_agent(
        "search",
        "cart",
        "--repo",
        str(shop_repo),
        "--store",
        "mysql://bob:s3cret-pw@db/x",
        cache=tmp_path / "c",
    )
    assert bad.returncode == 2 and "is not a postgresql:// URL" in bad.stderr
    for run in (done, found, bad):
        assert "s3cret-pw" not in run.stdout + run.stderr


def documented_roles_sql(database: str) -> list[str]:
    """The statements of docs/team-index.md's roles block, for `database` (psql commands and comments left out)."""
    page = (REPO / "docs" / "team-index.md").read_text(encoding="utf-8")
    block = page.split("<!-- roles-sql -->")[1].split("<!-- /roles-sql -->")[0]
    lines = [ln for ln in block.splitlines() if not ln.startswith(("```", "\\", "--"))]
    statements = [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
    return [
        s.replace("code_index", f'"{database}"') for s in statements if not s.startswith("CREATE DATABASE")
    ]


def test_the_documented_roles_write_and_read_and_a_reader_is_refused_writes(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    database = pg_url.split("/")[3].split("?")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for role in ("lsp_writer", "lsp_reader"):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
        for statement in documented_roles_sql(database):
            conn.execute(statement)  # type: ignore[arg-type]
    writer = pg_url.replace("postgres:@", "lsp_writer:change-me-writer@", 1)
    reader = pg_url.replace("postgres:@", "lsp_reader:change-me-reader@", 1)
    wrote = lsp_agent("index", str(shop_repo), "--store", writer, "--no-progress", cache=tmp_path / "ci")
    assert wrote.returncode == 0 and "(7 files, 0 already stored)" in wrote.stdout, wrote.stderr
    args = ("search", "cart total", "--repo", str(shop_repo), "--store", reader, "--json")
    found = lsp_agent(*args, cache=tmp_path / "r")
    assert found.returncode == 0 and json.loads(found.stdout)[0]["path"] == "shop/cart.py"
    assert found.stderr.strip() == ""  # read without a warning: the reader sees every table
    (shop_repo / "shop" / "new.py").write_text("def fresh_function():\n    pass\n")
    refused = lsp_agent("index", str(shop_repo), "--store", reader, "--no-progress", cache=tmp_path / "w")
    assert refused.returncode == 1
    assert "refused a write" in refused.stderr and "this role is read-only" in refused.stderr
    for run in (wrote, found, refused):
        assert "change-me" not in run.stdout + run.stderr


def test_vectors_are_shared_by_model_and_searchable_through_hnsw(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    with ScriptedModelServer([]) as server:

        def config(cache: str) -> IndexConfig:
            return IndexConfig(
                embeddings="openai/test-embed",
                api_base=server.base_url,
                api_key="test",
                embedding_cache=tmp_path / cache,
                store=pg_url,
            )

        published(shop_repo, pg_url, config("ci-vectors.sqlite3"), db=tmp_path / "ci.sqlite3")
        embedded = len(server.embedding_inputs)
        assert embedded >= 20
        server.embedding_inputs.clear()
        with WorkspaceIndex(
            shop_repo, config("laptop-vectors.sqlite3"), db_path=tmp_path / "l.sqlite3"
        ) as index:
            assert index.refresh().parsed == 0
            assert server.embedding_inputs == []  # every vector came from the team index
            assert index.search("refund order total", 1)
        server.embedding_inputs.clear()
        edited = tmp_path / "edited" / "shop"
        shutil.copytree(shop_repo, edited)
        cart = edited / "shop" / "cart.py"
        cart.write_text(
            cart.read_text() + "\n\ndef cart_weight(items):\n    return sum(i.weight for i in items)\n"
        )
        with WorkspaceIndex(
            edited, config("edited-vectors.sqlite3"), db_path=tmp_path / "e.sqlite3"
        ) as index:
            assert index.refresh().parsed == 1
            # cart.py's other chunks keep their hashes: their vectors come from the team index, not the model
            assert len(server.embedding_inputs) == 1 and "cart_weight" in server.embedding_inputs[0]
    with psycopg.connect(pg_url) as conn:
        indexes = [
            r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename='lsp_vectors'")
        ]
        assert any("USING hnsw" in d and "vector_cosine_ops" in d for d in indexes), indexes
        assert conn.execute("SELECT count(*) FROM lsp_vectors").fetchone()[0] == embedded
        dim = conn.execute("SELECT min(dim) FROM lsp_vectors").fetchone()[0]
        # A table this small would be scanned: with scans off, the nearest-chunk query's plan must use HNSW.
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")
        plan = conn.execute(
            f"EXPLAIN SELECT hash FROM lsp_vectors WHERE model=%s AND dim={dim} "
            f"ORDER BY vec::vector({dim}) <=> array_fill(0.5, ARRAY[{dim}])::vector({dim}) LIMIT 5",
            (team_model(server.base_url),),
        ).fetchall()
        assert f"lsp_vectors_hnsw_{dim}" in str(plan), plan
    team = TeamStore(pg_url)
    try:
        snapshot = team.snapshot("shop")
        assert snapshot is not None and snapshot.files == 7
        text = "def total_price"
        with psycopg.connect(pg_url) as conn:
            text = conn.execute(
                "SELECT text FROM lsp_chunks WHERE symbol='ShoppingCart.total_price'"
            ).fetchone()[0]
        import numpy as np

        from lsp_agent.index.embeddings import embedding_text

        query = np.array(hashed_embedding(embedding_text("shop/cart.py", "ShoppingCart.total_price", text)))
        nearest = team.nearest_chunks(team_model(server.base_url), query, snapshot.id, 3)
        assert nearest[0][0] == "shop/cart.py" and nearest[0][2] < 1e-5
    finally:
        team.close()


def team_model(api_base: str) -> str:
    """The team index's model key of the scripted embedding model."""
    from lsp_agent.index.vector_cache import cache_model_key

    return cache_model_key("openai/test-embed", api_base)


def test_secret_files_never_reach_the_team_index(shop_repo: Path, pg_url: str, tmp_path: Path) -> None:
    (shop_repo / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\nTOPSECRETKEY\n")
    (shop_repo / "shop" / ".env.production").write_text("STRIPE_KEY=sk_live_TOPSECRET\n")
    published(shop_repo, pg_url, db=tmp_path / "ci.sqlite3")
    with psycopg.connect(pg_url) as conn:
        paths = {r[0] for r in conn.execute("SELECT path FROM lsp_files")}
        leaked = conn.execute("SELECT count(*) FROM lsp_chunks WHERE text LIKE '%TOPSECRET%'").fetchone()[0]
    assert "shop/cart.py" in paths and not {"server.pem", "shop/.env.production"} & paths
    assert leaked == 0
