"""find_symbol's halves: definitions read from the index, references (and deep definitions) parsed on demand."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsp_agent.index.chunking import file_symbols, split_lines
from lsp_agent.index.exact import match_rank
from lsp_agent.index.models import SymbolHit
from lsp_agent.index.pipeline import decode_source

SNIPPET_CHARS = 200


class IndexedLines:
    """Files' lines as the index saw them (an editor buffer's text, else the disk), each file read once."""

    def __init__(self, root: Path, buffers: Mapping[str, str]) -> None:
        self.root = root
        self.buffers = buffers
        self._cache: dict[str, list[str]] = {}

    def lines(self, rel: str) -> list[str]:
        """A file's lines ([] when it cannot be read)."""
        lines = self._cache.get(rel)
        if lines is None:
            text = self.buffers.get(rel)
            if text is None:
                try:
                    text = decode_source((self.root / rel).read_bytes()) or ""
                except OSError:
                    text = ""
            lines = self._cache[rel] = split_lines(text)
        return lines

    def line(self, rel: str, line: int) -> str:
        """One line (1-based) of a file, cut to SNIPPET_CHARS; "" past the end."""
        lines = self.lines(rel)
        return lines[line - 1][:SNIPPET_CHARS] if 0 < line <= len(lines) else ""


def indexed_definitions(conn: sqlite3.Connection, name: str, limit: int) -> list[tuple]:
    """(name, qualified name, kind, path, line, end line) of the indexed definitions of a (dotted) name.

    A dotted name may start with the module path (`settings.Settings.load`, `pkg.mod.func`, Go's `store.Open`).
    """
    select = (
        "SELECT s.name, s.qualified_name, s.kind, f.path, s.line, s.end_line "
        "FROM symbols s JOIN files f ON f.id = s.file_id"
    )
    if "." not in name:
        query = f"{select} WHERE s.qualified_name=? OR s.name=? ORDER BY f.path, s.line LIMIT ?"
        return conn.execute(query, (name, name, limit)).fetchall()
    rows = conn.execute(f"{select} WHERE s.name=? ORDER BY f.path, s.line", (name.rsplit(".", 1)[-1],))
    return [r for r in rows if _names(name, r[1] or r[0], r[3])][:limit]


def _names(written: str, qualified: str, path: str) -> bool:
    """Whether a dotted name as written is this definition (qualified further, or after its module path)."""
    rank = match_rank(written, qualified, "", path)
    return rank is not None and (rank == 0 or qualified.endswith("." + written))


def symbol_hits(
    name: str, rows: list[tuple], candidates: Iterable[str], lines: IndexedLines, limit: int
) -> list[SymbolHit]:
    """Definitions (the indexed rows first) and references of `name`, parsing the candidate files in order."""
    last = name.rsplit(".", 1)[-1]
    defs = [
        SymbolHit(n, q, "definition", kind, path, line, end, lines.line(path, line).strip())
        for n, q, kind, path, line, end in rows
    ]
    seen = {(h.path, h.line) for h in defs}
    refs: list[SymbolHit] = []
    for path in candidates:
        if len(defs) + len(refs) >= limit:
            break
        for sym in file_symbols(path, "\n".join(lines.lines(path))):
            if sym.role == "reference":
                found = sym.name == last
            else:
                q = sym.qualified_name or sym.name
                found = (path, sym.line) not in seen and (
                    name in (q, sym.name) or ("." in name and _names(name, q, path))
                )
            if found:
                hit = SymbolHit(*sym[:4], path, sym.line, sym.end_line, lines.line(path, sym.line).strip())
                (refs if sym.role == "reference" else defs).append(hit)
    defs.sort(key=lambda h: (h.path, h.line))
    return (defs + refs)[:limit]


def definitions_starting_with(
    conn: sqlite3.Connection, prefix: str, limit: int
) -> list[tuple[str, str, str, int]]:
    """(name, kind, path, line) of indexed definitions whose name starts with `prefix`, shortest names first."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        "SELECT s.name, s.kind, f.path, s.line FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.name LIKE ? ESCAPE '\\' ORDER BY length(s.name), s.name, f.path LIMIT ?",
        (pattern, max(1, int(limit))),
    ).fetchall()
    return [(name, kind, path, int(line)) for name, kind, path, line in rows]
