"""Definitions a query names exactly: `name`, `Class.method`, `module.function`, `pkg.mod.Class.method`, `Type::method`.

Each written name is matched against the symbols table (and the symbols of files overridden for the query) and
ranked by how much of it the definition explains: the qualified name itself, or a module path plus it, first.
A definition without a chunk of its own (a method of a class small enough to be one chunk, a constant) becomes
a hit narrowed to its own lines inside the chunk that holds it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import NamedTuple

from lsp_agent.index.models import Chunk, FileAnalysis
from lsp_agent.index.query import SHORT_QUERY_WORDS, QueryAnalysis, looks_like_code, written_alone

VALUE_KINDS = frozenset({"constant", "attribute", "field", "variable"})
VALUE_PENALTY = 2.25  # an assignment (constant, field) after every class, function or method of rank 0..2
DECLARATION_PENALTY = 0.25
WORST_RANK = 3 + VALUE_PENALTY + DECLARATION_PENALTY
_SCOPED = re.compile(r"(?<![\w.:])(?:::)?\w+(?:::\w+)+")  # C++ and Rust paths: `Type::method`, `crate::m::f`
_PATH_ROOTS = frozenset({"crate", "self", "super"})  # Rust path roots that name no module
_MODULE_FILES = frozenset({"__init__", "index", "mod"})  # a file standing for its folder's module


class DefinitionSpan(NamedTuple):
    """A hit narrowed to one definition inside a larger chunk (`chunk` is that chunk's key; `start` its own line)."""

    chunk: Hashable
    start: int
    end: int
    symbol: str
    kind: str


class ExactMatch(NamedTuple):
    """A named definition as a ranking key (a chunk key or a DefinitionSpan), its file and its rank (0 best)."""

    key: Hashable
    path: str
    rank: float


def override_key(rel: str, index: int) -> tuple[str, str, int]:
    """The ranking key of the index-th chunk of a file overridden for one query."""
    return ("override", rel, index)


def base_key(key: Hashable) -> Hashable:
    """The chunk a ranking key stands for (a narrowed hit's enclosing chunk)."""
    return key.chunk if isinstance(key, DefinitionSpan) else key


def _dotted(name: str) -> str:
    parts = [p for p in name.strip(":").split("::") if p]
    while len(parts) > 1 and parts[0] in _PATH_ROOTS:
        parts = parts[1:]
    return ".".join(parts)


def named_symbols(analysis: QueryAnalysis) -> list[str]:
    """Names a short query asks for: the whole query if it is one, dotted and `::` paths, code-like identifiers.

    A part of a dotted name (`load_config` in `Settings.load_config`) is not a name of its own unless the query
    also writes it alone.
    """
    text = analysis.text
    if len(re.findall(r"\w+", text)) > SHORT_QUERY_WORDS:
        return []
    names: list[str] = []
    if analysis.is_code_query and "/" not in text:
        names.append(_dotted(text.strip().strip("`").rstrip("()")))
    names += analysis.dotted + [_dotted(m) for m in _SCOPED.findall(text)]
    parts = {part for name in names for part in name.split(".")}
    for n in analysis.identifiers:
        if (looks_like_code(n) or n in analysis.code) and (n not in parts or written_alone(n, text)):
            names.append(n)
    return list(dict.fromkeys(n for n in names if n and not n.endswith((".py", "."))))


def _module_prefixes(path: str) -> tuple[list[str], list[str]]:
    """A file's module path parts (`src/click/core.py` -> src, click, core) and its folder's parts."""
    parts = path.rsplit(".", 1)[0].split("/")
    folder = parts[:-1]
    return (folder if parts[-1] in _MODULE_FILES else parts), folder


def match_rank(written: str, qualified: str, kind: str, path: str) -> float | None:
    """How well a definition answers a written name: 0 exact (or a module path plus it) .. 3, None no match."""
    w, q = written.split("."), qualified.split(".")
    if w[-1] != q[-1]:
        return None
    if w == q:
        rank = 0.0
    elif len(w) > len(q) and w[-len(q) :] == q:
        prefix = w[: -len(q)]
        module, folder = _module_prefixes(path)
        named = any(len(p) >= len(prefix) and p[-len(prefix) :] == prefix for p in (module, folder))
        rank = 0.0 if named else (2.0 if len(q) > 1 else 3.0)
    elif len(w) == 1:
        rank = 2.0  # a bare name that exists only as a member
    elif q[-len(w) :] == w:
        rank = 1.0  # qualified further than written (an outer class, a namespace)
    else:
        return None
    return rank + (VALUE_PENALTY if kind in VALUE_KINDS else 0.0)


def _widened_start(lines: list[str], first: int, line: int) -> int:
    """A definition's first line (lines[0] is line `first`), over decorators, attributes and comments above."""
    row = line - first
    if not 0 <= row < len(lines):
        return line
    while row > 0 and lines[row - 1].strip().startswith(("@", "#", "//", "/*", "*")):
        row -= 1
    return first + row


def narrowed(chunk: Chunk, span: DefinitionSpan, file_lines: Callable[[], list[str]]) -> Chunk:
    """The part of a chunk a narrowed hit covers (with the comments and decorators above), its symbol and kind.

    A class skeleton's text skips its members' bodies, so a definition inside one is read from `file_lines()`.
    """
    if not chunk.start <= span.start <= chunk.end:
        return chunk
    lines, first = chunk.text.split("\n"), chunk.start
    if len(lines) != chunk.end - chunk.start + 1:
        lines, first = file_lines()[chunk.start - 1 : chunk.end], chunk.start
    start, end = _widened_start(lines, first, span.start), min(span.end, chunk.end)
    return Chunk(start, end, span.symbol, span.kind, "\n".join(lines[start - first : end - first + 1]))


class _Candidate(NamedTuple):
    key: Hashable
    chunk: Chunk  # without its text for index chunks
    path: str
    qualified: str
    kind: str
    line: int
    end_line: int

    def preference(self) -> tuple[bool, int]:
        """Its own chunk first, else the smallest chunk holding it."""
        return self.chunk.symbol != self.qualified, self.chunk.end - self.chunk.start


def _ranked(candidates: Iterable[_Candidate], written: Mapping[str, list[str]]) -> list[ExactMatch]:
    """Each matching definition once, as its own chunk or as a span narrowed inside the chunk holding it."""
    chosen: dict[tuple[str, int, str], tuple[_Candidate, float]] = {}
    for c in candidates:
        ident = (c.path, c.line, c.qualified)
        if ident in chosen:
            if c.preference() < chosen[ident][0].preference():
                chosen[ident] = (c, chosen[ident][1])
            continue
        ranks = [
            match_rank(w, c.qualified, c.kind, c.path)
            for w in written.get(c.qualified.rsplit(".", 1)[-1], ())
        ]
        rank = min((r for r in ranks if r is not None), default=None)
        if rank is not None:
            chosen[ident] = (c, rank)
    with_body = {(c.path, c.qualified) for c, _ in chosen.values() if not c.preference()[0]}
    out = []
    for c, rank in chosen.values():
        key = c.key
        if c.chunk.symbol != c.qualified:
            key = DefinitionSpan(key, c.line, min(c.end_line, c.chunk.end), c.qualified, c.kind)
            if (c.path, c.qualified) in with_body:
                rank += DECLARATION_PENALTY  # a C++ declaration in its class: the definition comes first
        out.append(ExactMatch(key, c.path, rank))
    return out


def exact_definitions(
    conn: sqlite3.Connection,
    names: list[str],
    overrides: Mapping[str, FileAnalysis] | None = None,
    values: bool = True,
) -> list[ExactMatch]:
    """The definitions of the named symbols, in the index and in the files overridden for this query.

    `values=False` leaves assignments out (a sentence that mentions `key` asks for no field named key).
    """
    written: dict[str, list[str]] = {}
    for name in names:
        written.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    if not written:
        return []
    overrides = overrides or {}
    marks = ",".join("?" * len(written))
    rows = conn.execute(
        "SELECT c.id, c.start, c.end_line, c.symbol, f.path, s.qualified_name, s.name, s.kind, s.line, s.end_line "
        "FROM symbols s JOIN files f ON f.id = s.file_id JOIN chunks c ON c.file_id = s.file_id "
        f"AND c.start <= s.line AND s.line <= c.end_line WHERE s.name IN ({marks}) ORDER BY f.path, s.line, c.start",
        list(written),
    ).fetchall()
    candidates = [
        _Candidate(cid, Chunk(start, end, symbol, "", ""), path, qualified or name, kind, line, end_line)
        for cid, start, end, symbol, path, qualified, name, kind, line, end_line in rows
        if path not in overrides
    ]
    for rel, analysis in overrides.items():
        for sym in analysis.symbols:
            if sym.name in written:
                candidates += [
                    _Candidate(
                        override_key(rel, i),
                        chunk,
                        rel,
                        sym.qualified_name or sym.name,
                        sym.kind,
                        sym.line,
                        sym.end_line,
                    )
                    for i, chunk in enumerate(analysis.chunks)
                    if chunk.start <= sym.line <= chunk.end
                ]
    return _ranked((c for c in candidates if values or c.kind not in VALUE_KINDS), written)
