"""A ranked map of the repository: PageRank over which files mention names defined in which, then top definitions."""

from __future__ import annotations

import math
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from lsp_agent.index.mentions import Mentions

DAMPING = 0.85
ITERATIONS = 50
MAX_DEFINERS = 20  # a name defined in more files than this (save, get, name) links nothing
MIN_NAME = 3  # shorter names (i, e, db) are local variables far more often than uses of a definition
MAP_KINDS = ("class", "function", "method", "interface", "struct", "enum", "constant")
MAP_KINDS += ("trait", "union", "type")  # Rust traits, C unions, type aliases (Go, TypeScript, Rust, C)


def _weight(name: str, definers: int, spread: float) -> float:
    """How much a use of `name` says about importance: rare, descriptive names count more.

    `spread` is the share of files mentioning the name: a name used everywhere (format, filter) is a common word
    more than a dependency.
    """
    w = -math.log(spread)
    if name.startswith("_"):
        w *= 0.1
    if definers > 5:
        w *= 0.1
    if len(name) >= 8 and ("_" in name.strip("_") or name != name.lower()):
        w *= 3.0
    return w


def pagerank(n: int, edges: dict[tuple[int, int], float]) -> np.ndarray:
    """Power-iteration PageRank over weighted edges (src, dst) -> weight; dangling mass is spread evenly."""
    if n == 0:
        return np.zeros(0)
    out_w = np.zeros(n)
    for (src, _), w in edges.items():
        out_w[src] += w
    srcs = np.array([s for s, _ in edges], dtype=np.int64)
    dsts = np.array([d for _, d in edges], dtype=np.int64)
    ws = np.array(list(edges.values()), dtype=np.float64)
    if len(ws):
        ws = ws / out_w[srcs]
    rank = np.full(n, 1.0 / n)
    dangling = out_w == 0
    for _ in range(ITERATIONS):
        new = np.zeros(n)
        if len(ws):
            np.add.at(new, dsts, rank[srcs] * ws)
        new = DAMPING * (new + rank[dangling].sum() / n) + (1 - DAMPING) / n
        if np.abs(new - rank).sum() < 1e-9:
            rank = new
            break
        rank = new
    return rank


Definitions = list[tuple[int, str, str, str, int]]  # (file, name, qualified name, kind, line)


def build_repo_map(
    conn: sqlite3.Connection, mentions: Mentions, max_chars: int, line_of: Callable[[str, int], str]
) -> str:
    """Render the most important files with their most mentioned definitions, within max_chars."""
    files = mentions.paths
    if not files:
        return ""
    defs_by_name, own, definitions = _map_definitions(conn, {p: i for i, p in enumerate(files)})
    edges, name_edges = _reference_edges(mentions, len(files), defs_by_name, own)
    rank = pagerank(len(files), edges)
    def_score = _definition_scores(rank, edges, name_edges, defs_by_name)
    by_file: dict[int, list[tuple[float, int, str, str]]] = defaultdict(list)
    for file_idx, name, qualified, kind, line in definitions:
        score = def_score.get((file_idx, name), 0.0) + (1e-6 if kind == "class" else 0.0)
        by_file[file_idx].append((score, line, qualified, kind))
    order = sorted(range(len(files)), key=lambda i: (-rank[i], files[i]))
    return _render(files, order, by_file, max_chars, line_of)


def _map_definitions(
    conn: sqlite3.Connection, index: dict[str, int]
) -> tuple[dict[str, set[int]], dict[tuple[int, str], int], Definitions]:
    """The files defining each name, how often a file defines a name, and every definition the map may show."""
    marks = ",".join("?" * len(MAP_KINDS))
    defs_by_name: dict[str, set[int]] = defaultdict(set)
    own: dict[tuple[int, str], int] = defaultdict(int)  # definitions of a name in a file: mentions, not uses
    definitions: Definitions = []
    for path, name, qualified, kind, line in conn.execute(
        "SELECT f.path, s.name, s.qualified_name, s.kind, s.line FROM symbols s JOIN files f ON f.id=s.file_id "
        f"WHERE s.kind IN ({marks})",
        MAP_KINDS,
    ):
        if path in index:
            defs_by_name[name].add(index[path])
            own[(index[path], name)] += 1
            definitions.append((index[path], name, qualified or name, kind, line))
    return defs_by_name, own, definitions


def _reference_edges(
    mentions: Mentions, n_files: int, defs_by_name: dict[str, set[int]], own: dict[tuple[int, str], int]
) -> tuple[dict[tuple[int, int], float], dict[tuple[int, str], float]]:
    """Weighted file -> defining-file edges, and each file's weight on each name it uses."""
    # A file using a name points at the files defining it; names defined all over, and dunders, say nothing.
    names = [
        name
        for name, definers in defs_by_name.items()
        if len(definers) <= MAX_DEFINERS and len(name) >= MIN_NAME and not (name[:2] == name[-2:] == "__")
    ]
    found = mentions.mentions_of(names)
    spread = np.bincount([name_idx for name_idx, _, _ in found], minlength=len(names)) / n_files
    edges: dict[tuple[int, int], float] = defaultdict(float)
    name_edges: dict[tuple[int, str], float] = defaultdict(float)
    for name_idx, src, count in found:
        name = names[name_idx]
        uses = count - own.get((src, name), 0)
        if uses <= 0:
            continue
        definers = defs_by_name[name]
        w = _weight(name, len(definers), spread[name_idx]) * math.sqrt(uses)
        if w <= 0:  # mentioned by every file: no information (and no zero-weight edges for PageRank)
            continue
        for dst in definers:
            if dst != src:
                edges[(src, dst)] += w
                name_edges[(src, name)] += w
    return edges, name_edges


def _definition_scores(
    rank: np.ndarray,
    edges: dict[tuple[int, int], float],
    name_edges: dict[tuple[int, str], float],
    defs_by_name: dict[str, set[int]],
) -> dict[tuple[int, str], float]:
    """Each definition's score: the rank flowing into it from the files that reference its name."""
    out_total: dict[int, float] = defaultdict(float)
    for (src, _), w in edges.items():
        out_total[src] += w
    def_score: dict[tuple[int, str], float] = defaultdict(float)
    for (src, name), w in name_edges.items():
        definers = defs_by_name[name]
        share = rank[src] * w / out_total[src] / len(definers)
        for dst in definers:
            if dst != src:
                def_score[(dst, name)] += share
    return def_score


def _render(
    files: Sequence[str],
    order: list[int],
    by_file: dict[int, list[tuple[float, int, str, str]]],
    max_chars: int,
    line_of: Callable[[str, int], str],
) -> str:
    """Files in rank order, each with its 12 best definitions' lines, until max_chars is reached."""
    parts: list[str] = []
    used = 0
    for file_idx in order:
        entries = sorted(by_file.get(file_idx, []), key=lambda e: (-e[0], e[1]))[:12]
        block = [f"{files[file_idx]}:"]
        for _, line, qualified, kind in sorted(entries, key=lambda e: e[1]):
            text = line_of(files[file_idx], line).strip() or f"{kind} {qualified}"
            block.append(f"  {line}: {text[:120]}")
        rendered = "\n".join(block) + "\n"
        if used + len(rendered) > max_chars:
            if not parts and max_chars > 0:
                parts.append(rendered[:max_chars])
            break
        parts.append(rendered)
        used += len(rendered)
    return "".join(parts).rstrip("\n")
