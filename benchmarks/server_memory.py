"""Server memory: RSS with a ~500k-line workspace (the Django sdist) indexed, against a bare pygls server's RSS.

    python benchmarks/server_memory.py [--workspace DIR]

Without --workspace it uses benchmarks/.cache/django-5.2.8/ (the index benchmark's copy), fetching the sdist
with pip when it is missing. The index goes to a fresh temporary cache.
Target: <= 300 MB RSS once indexed (embeddings "none").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_speed import fetch_sdist  # noqa: E402
from server_wire import BARE, OURS, WireClient  # noqa: E402

DJANGO = "django==5.2.8"

TARGET_MB = 300


def django_workspace() -> Path:
    """The extracted Django sdist (the index benchmark's), downloading it once."""
    return fetch_sdist(DJANGO)


def count_lines(root: Path) -> tuple[int, int]:
    """(text files, lines) under root, roughly what the index sees."""
    files = lines = 0
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in {
            ".py",
            ".txt",
            ".rst",
            ".html",
            ".js",
            ".css",
            ".json",
            ".cfg",
            ".toml",
        }:
            files += 1
            with path.open("rb") as fh:
                lines += sum(1 for _ in fh)
    return files, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="workspace to index (default: the Django sdist)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for indexing")
    args = parser.parse_args()
    root = (args.workspace or django_workspace()).resolve()
    files, lines = count_lines(root)
    print(f"workspace {root} ({files} text files, {lines:,} lines)")

    bare = WireClient(BARE, root)
    bare.initialize(root)
    time.sleep(0.5)
    bare_rss, _ = bare.rss_mb()
    bare.close()

    with tempfile.TemporaryDirectory() as cache:
        ours = WireClient(OURS, root, env={"XDG_CACHE_HOME": cache, "LSP_AGENT_NO_PREWARM": "1"})
        ours.initialize(root)
        started = time.perf_counter()
        deadline = started + args.timeout
        status: dict = {}
        while time.perf_counter() < deadline:
            status = ours.request("workspace/executeCommand", {"command": "lspAgent.status", "arguments": []})
            if status["index"]["ready"]:
                break
            time.sleep(1.0)
        seconds = time.perf_counter() - started
        rss, peak = ours.rss_mb()
        ours.request(
            "workspace/executeCommand",
            {"command": "lspAgent.search", "arguments": [{"query": "queryset filter"}]},
        )
        after_search, peak = ours.rss_mb()
        ours.close()

    index = status.get("index", {})
    print(
        f"indexed in {seconds:.1f} s: {index.get('files')} files, {index.get('chunks')} chunks, {index.get('symbols')} symbols, ready={index.get('ready')}"
    )
    print(f"bare pygls server RSS           {bare_rss:7.1f} MB")
    print(
        f"lsp-agent RSS, index ready      {rss:7.1f} MB   ({rss / bare_rss:.1f}x bare, +{rss - bare_rss:.1f} MB)"
    )
    print(f"lsp-agent RSS after one search  {after_search:7.1f} MB   peak {peak:.1f} MB")
    print(f"target <= {TARGET_MB} MB: {'met' if max(rss, after_search) <= TARGET_MB else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
