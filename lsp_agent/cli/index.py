"""`lsp-agent index` and `lsp-agent search`: build/refresh a workspace index and query it from a terminal."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from lsp_agent.cli.common import LOG_LEVELS, add_index_flags
from lsp_agent.index.store_url import TeamStoreError
from lsp_agent.logs import setup_logging

if TYPE_CHECKING:  # the index modules load when a command runs, not for every `lsp-agent` start
    from lsp_agent.index.locate import FileHit
    from lsp_agent.index.models import IndexConfig, IndexStats, SearchHit
    from lsp_agent.index.team_store import TeamStore
    from lsp_agent.index.workspace_index import WorkspaceIndex

JSON_KEYS = ("path", "start", "end", "symbol", "kind", "score")
INDEX_SETTINGS = ("embeddings", "max_file_size", "index_exclude", "api_base", "api_key", "index_store")
STORE_HELP = "team index: a postgresql:// URL (docs/team-index.md); default: the local SQLite index"


class CliError(Exception):
    """A problem the user can fix; printed as one line, exit status 2."""


class ProgressBar:
    """A one-line progress bar on a terminal's stderr; silent elsewhere."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled and stream.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, path: str) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and done != total):
            return
        self._last = now
        width = 30
        filled = int(width * done / total) if total else width
        label = "embedding" if path == "embeddings" else "indexing"
        line = f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {path[-40:]}"
        self.stream.write(line.ljust(110)[:110])
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`index` and `search`."""
    p = commands.add_parser("index", help="build or refresh the workspace index")
    p.add_argument("path", nargs="?", default=".", help="workspace root (default: current directory)")
    add_index_flags(p)
    p.add_argument("--store", help=STORE_HELP + "; publishes a snapshot of the tree there")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.set_defaults(handler=run_index)

    p = commands.add_parser("search", help="search the workspace index")
    p.add_argument("query", nargs="?", help="what to look for (natural language, identifiers; - reads stdin)")
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.add_argument("--top-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.add_argument("--queries", help="JSON lines file of {id, query}; prints one JSON line per query")
    p.add_argument(
        "--files", action="store_true", help="rank files (where to look for a task or an issue report)"
    )
    add_index_flags(p)
    p.add_argument("--store", help=STORE_HELP)
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.set_defaults(handler=run_search)


def _config(args: argparse.Namespace) -> IndexConfig:
    """IndexConfig from flags over the project settings (env, workspace .env); bad settings are warned about."""
    from lsp_agent.assembly import index_config
    from lsp_agent.config import SPECS
    from lsp_agent.settings_sources import load_settings

    max_size = getattr(args, "max_file_size", None)
    if max_size is not None and max_size <= 0:
        raise CliError(f"--max-file-size must be a positive number of bytes, got {max_size}")
    flags = {
        "embeddings": getattr(args, "embeddings", None),
        "max_file_size": max_size,
        "index_store": getattr(args, "store", None),
    }
    settings, errors = load_settings(_root(args), flags=flags)
    for error in errors:
        if any(f"'{name}'" in error or f": {SPECS[name].key} = " in error for name in INDEX_SETTINGS):
            print(f"lsp-agent: warning: {error}", file=sys.stderr)
    return index_config(settings, extra_exclude=getattr(args, "exclude", None) or [])


def _root(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "path", None) or getattr(args, "repo", None) or ".")


def _open(args: argparse.Namespace) -> WorkspaceIndex:
    """The index of the workspace the flags name; CliError when it is no folder or cannot be opened."""
    from lsp_agent.index.workspace_index import WorkspaceIndex

    root = _root(args)
    if not root.exists():
        raise CliError(f"no such folder: {root}")
    if not root.is_dir():
        raise CliError(f"not a folder: {root} (pass the workspace folder)")
    try:
        return WorkspaceIndex(root, _config(args))
    except (PermissionError, OSError) as exc:
        raise CliError(f"cannot open {root}: {exc}") from exc
    except ValueError as exc:  # an index store that is no postgresql:// URL (the message is redacted)
        raise CliError(str(exc)) from None


def _refresh(index: WorkspaceIndex, show_progress: bool) -> IndexStats:
    """Refresh with a progress bar; CliError when the embeddings fail or nothing is indexable."""
    from lsp_agent.index.embeddings import EmbeddingError

    bar = ProgressBar(sys.stderr, show_progress)
    try:
        stats = index.refresh(progress=bar)
    except EmbeddingError as exc:
        raise CliError(str(exc)) from exc
    finally:
        bar.finish()
    if stats.files == 0:
        raise CliError(
            f"nothing to index in {index.root}: no text files outside .gitignore, hidden folders "
            "and the size limit"
        )
    return stats


def _run(func, args: argparse.Namespace) -> int:
    setup_logging(getattr(args, "log_level", None))
    try:
        return func(args)
    except CliError as exc:
        print(f"lsp-agent: {exc}", file=sys.stderr)
        return 2
    except TeamStoreError as exc:  # unreachable, read-only role, missing tables: the message has no password
        print(f"lsp-agent: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # disk full, read-only cache folder, a lock held past the timeout
        print(
            f"lsp-agent: the index database failed: {exc} (the cache lives under $XDG_CACHE_HOME or "
            "~/.cache/lsp-agent; check that it is writable and has free space)",
            file=sys.stderr,
        )
        return 1


def run_index(args: argparse.Namespace) -> int:
    """Build or refresh the index of PATH and print its size and how long it took."""

    def body(args: argparse.Namespace) -> int:
        with _open(args) as index:
            team = index.team.connect() if index.team is not None else None  # fails loudly: CI must know
            if team is not None:
                team.create_schema()
            stats = _refresh(index, not getattr(args, "no_progress", False))
            print(
                f"indexed {stats.files} files, {stats.chunks} chunks, {stats.symbols} symbols "
                f"in {stats.seconds:.2f} s ({stats.parsed} parsed)"
            )
            print(f"database: {index.db_path}")
            if team is not None:
                _publish(index, team)
        return 0

    return _run(body, args)


def _publish(index: WorkspaceIndex, team: TeamStore) -> None:
    """Write the refreshed index to the team index as its commit's snapshot and say what was reused."""
    from lsp_agent.index.team_sync import publish_index

    started = time.perf_counter()
    done = publish_index(index, team)
    vectors = f", vectors {done.reused_vectors}/{done.vectors} reused" if done.vectors else ""
    print(
        f"team index {team.where}: snapshot {done.repo}@{done.commit} ({done.files} files, "
        f"{done.reused_files} already stored{vectors}) in {time.perf_counter() - started:.2f} s"
        + (" with its SQLite file for laptops to join from" if done.file else "")
    )


def hit_json(hit: SearchHit) -> dict:
    """The --json shape of a hit: exactly path, start, end, symbol, kind, score."""
    return {k: getattr(hit, k) for k in JSON_KEYS}


def _print_hits(hits: list[SearchHit], out: TextIO) -> None:
    if not hits:
        print("no results", file=out)
    for rank, hit in enumerate(hits, start=1):
        name = f"  {hit.symbol}" if hit.symbol else ""
        print(
            f"{rank:>2}. {hit.path}:{hit.start}-{hit.end}  [{hit.kind}]{name}  score {hit.score:.3f}",
            file=out,
        )
        lines = [ln for ln in hit.text.splitlines() if ln.strip()][:4]
        for line in lines:
            print(f"      {line[:100]}", file=out)


def file_json(hit: FileHit) -> dict:
    """The --files --json shape of a file: path, score, symbols [{name, line}], reasons."""
    symbols = [{"name": name, "line": line} for name, line in hit.symbols]
    return {"path": hit.path, "score": hit.score, "symbols": symbols, "reasons": hit.reasons}


def _print_files(hits: list[FileHit], out: TextIO) -> None:
    if not hits:
        print("no results", file=out)
    for rank, hit in enumerate(hits, start=1):
        print(f"{rank:>2}. {hit.path}  score {hit.score:.3f}", file=out)
        if hit.symbols:
            print("      " + ", ".join(f"{name} (line {line})" for name, line in hit.symbols), file=out)
        if hit.reasons:
            print("      " + "; ".join(dict.fromkeys(hit.reasons)), file=out)


def _read_queries(path: str) -> list[tuple[object, str]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read --queries file {path}: {exc.strerror or exc}") from exc
    queries = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            queries.append((item["id"], str(item["query"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise CliError(f"{path}:{n}: expected a JSON object with 'id' and 'query' ({exc})") from exc
    if not queries:
        raise CliError(f"{path} holds no queries")
    return queries


def run_search(args: argparse.Namespace) -> int:
    """Refresh the index if needed, then print the best chunks (or --files) for QUERY or each of --queries."""

    def body(args: argparse.Namespace) -> int:
        query = (sys.stdin.read() if args.query == "-" else args.query or "").strip()
        files = getattr(args, "files", False)
        if not args.queries and not query:
            raise CliError(
                "empty query: pass what to look for, e.g. lsp-agent search 'parse the config file'"
            )
        if args.top_k <= 0:
            raise CliError(f"--top-k must be at least 1, got {args.top_k}")
        queries = _read_queries(args.queries) if args.queries else []
        with _open(args) as index:
            _refresh(index, show_progress=True)
            if queries:
                for qid, text in queries:
                    if files:
                        found = index.locate(text, args.top_k) if text.strip() else []
                        print(json.dumps({"id": qid, "results": [file_json(f) for f in found]}))
                        continue
                    hits = index.search(text, args.top_k) if text.strip() else []
                    print(json.dumps({"id": qid, "results": [hit_json(h) for h in hits]}))
                return 0
            if files:
                found = index.locate(query, args.top_k)
                if args.json:
                    print(json.dumps([file_json(f) for f in found]))
                else:
                    _print_files(found, sys.stdout)
                return 0
            hits = index.search(query, args.top_k)
            if args.json:
                print(json.dumps([hit_json(h) for h in hits], indent=None))
            else:
                _print_hits(hits, sys.stdout)
        return 0

    return _run(body, args)
