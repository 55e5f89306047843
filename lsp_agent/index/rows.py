"""A file's analysis as database rows: what index workers compute and send back (no numpy, no SQLite here)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from lsp_agent.index.models import FileAnalysis


def text_hash(data: bytes | str) -> str:
    """Content hash used for files and chunk texts."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class FileRows:
    """A file's analysis as database rows: what index workers send back (plain tuples pickle fast)."""

    language: str
    chunks: list[tuple[int, int, str | None, str, str, int, bytes, str]]  # start, end, symbol, kind, text,
    # token count, packed terms, hash
    symbols: list[tuple[str, str | None, str, int, int]]  # definitions: name, qualified, kind, line, end_line
    identifiers: bytes  # tokens.identifier_counts() of the file


def file_rows(path: str, analysis: FileAnalysis) -> FileRows:
    """The rows of one analysed file; a chunk's hash covers its path, symbol and text (what gets embedded)."""
    chunks = [
        (c.start, c.end, c.symbol, c.kind, c.text, length, terms, text_hash(f"{path}\0{c.symbol}\0{c.text}"))
        for c, (length, terms) in zip(analysis.chunks, analysis.tokens, strict=True)
    ]
    symbols = [(s.name, s.qualified_name, s.kind, s.line, s.end_line) for s in analysis.symbols]
    return FileRows(analysis.language, chunks, symbols, analysis.identifiers)
