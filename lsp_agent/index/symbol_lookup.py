"""find_symbol's halves: definitions read from the index, references (and deep definitions) parsed on demand."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsp_agent.index.chunking import file_symbols, split_lines
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
    """(name, qualified name, kind, path, line, end line) of the indexed definitions of a (dotted) name."""
    where = "s.qualified_name=? OR s.name=?"
    params: list[object] = [name, name]
    if "." in name:
        where += " OR s.qualified_name LIKE ? ESCAPE '\\'"
        params.append("%." + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"))
    return conn.execute(
        "SELECT s.name, s.qualified_name, s.kind, f.path, s.line, s.end_line "
        f"FROM symbols s JOIN files f ON f.id = s.file_id WHERE {where} ORDER BY f.path, s.line LIMIT ?",
        (*params, limit),
    ).fetchall()


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
                    name in (q, sym.name) or ("." in name and q.endswith("." + name))
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
