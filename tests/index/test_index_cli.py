"""`lsp-agent index` and `lsp-agent search` through a real subprocess."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            **env,
        },
    )


def test_index_prints_counts_and_search_finds(shop_repo: Path) -> None:
    result = _run("index", str(shop_repo))
    assert result.returncode == 0, result.stderr
    assert "indexed 7 files" in result.stdout and "chunks" in result.stdout and "symbols" in result.stdout
    assert " s (7 parsed)" in result.stdout
    assert "\r" not in result.stderr  # no progress bar when stderr is not a terminal

    result = _run("search", "check a credit card number", "--repo", str(shop_repo), "--top-k", "3")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert "shop/payments.py:8-" in first and "validate_card_number" in first


def test_search_json_has_exactly_the_documented_keys(shop_repo: Path) -> None:
    result = _run("search", "stock levels", "--json", "--top-k", "4", cwd=shop_repo)
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert 1 <= len(hits) <= 4
    for hit in hits:
        assert list(hit) == ["path", "start", "end", "symbol", "kind", "score"]
        assert "/" in hit["path"] or hit["path"].endswith((".py", ".md"))
        assert 1 <= hit["start"] <= hit["end"]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_queries_file_runs_many_queries(shop_repo: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "a", "query": "refund a payment"})
        + "\n\n"
        + json.dumps({"id": 7, "query": "Inventory"})
        + "\n"
    )
    result = _run("search", "--queries", str(queries), "--repo", str(shop_repo), "--top-k", "2")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", 7]
    best = lines[0]["results"][0]
    assert best["path"] == "shop/payments.py" and best["start"] <= 38 <= best["end"]  # def refund_payment
    assert all(len(line["results"]) <= 2 for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("index", "{missing}"), "no such folder"),
        (("index", "{file}"), "not a folder"),
        (("index", "{empty}"), "nothing to index"),
        (("search", "", "--repo", "{repo}"), "empty query"),
        (("search", "x", "--repo", "{missing}"), "no such folder"),
        (("search", "x", "--repo", "{empty}", "--json"), "nothing to index"),
        (("search", "x", "--repo", "{file}"), "not a folder"),
        (("search", "x", "--repo", "{repo}", "--top-k", "0"), "--top-k"),
        (("search", "--queries", "{missing}", "--repo", "{repo}"), "cannot read --queries"),
        (("search", "--queries", "{file}", "--repo", "{repo}"), "expected a JSON object"),
    ],
)
def test_errors_exit_non_zero_with_a_message(shop_repo: Path, tmp_path: Path, args, message: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "plain.txt").write_text("not json\n")
    values = {
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "plain.txt"),
        "empty": str(tmp_path / "empty"),
        "repo": str(shop_repo),
    }
    result = _run(*(a.format(**values) for a in args))
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder, so it cannot be made unreadable")
def test_unreadable_folder_is_a_clear_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.py").write_text("x = 1\n")
    locked.chmod(0)
    try:
        result = _run("index", str(locked))
    finally:
        locked.chmod(0o755)
    assert result.returncode != 0
    assert "not readable" in result.stderr and "Traceback" not in result.stderr


def test_bad_index_settings_are_warned_about_and_flags_win(shop_repo: Path) -> None:
    result = _run("index", str(shop_repo), LSP_AGENT_EMBEDDINGS=" ")
    assert result.returncode == 0, result.stderr
    assert "warning" in result.stderr and "embeddings" in result.stderr
    # A flag overrides the environment: no embedding model is contacted with --embeddings none.
    result = _run("index", str(shop_repo), "--embeddings", "none", LSP_AGENT_EMBEDDINGS="openai/unreachable")
    assert result.returncode == 0, result.stderr
    assert "indexed 7 files" in result.stdout


def test_progress_bar_on_a_terminal(shop_repo: Path) -> None:
    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "index", str(shop_repo)],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=60,
            env=env,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while select.select([leader], [], [], 0.5)[0]:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO once the terminal's other end is closed
                break
            if not data:
                break
            seen += data
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0 and "indexed 7 files" in proc.stdout
    assert b"indexing [" in seen and b"7/7" in seen


def test_search_into_a_closed_pipe_stops_quietly(shop_repo: Path) -> None:
    assert _run("index", str(shop_repo)).returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line (as `| head` is after its lines)
    try:
        search = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "search", "cart total", "--repo", str(shop_repo)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in search.stderr and "BrokenPipeError" not in search.stderr, search.stderr
    assert search.returncode == 141
