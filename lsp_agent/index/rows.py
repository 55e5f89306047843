"""A file's analysis as database rows: what index workers compute and send back (no numpy, no SQLite here)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from lsp_agent.index.models import FileAnalysis
from lsp_agent.index.tokens import pack_terms


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
    symbols: list[tuple[str, str | None, str, str, int, int]]  # name, qualified, role, kind, line, end_line


def file_rows(path: str, analysis: FileAnalysis) -> FileRows:
    """The rows of one analysed file; a chunk's hash covers its path, symbol and text (what gets embedded)."""
    chunks = [
        (
            c.start,
            c.end,
            c.symbol,
            c.kind,
            c.text,
            sum(counts.values()),
            pack_terms(counts),
            text_hash(f"{path}\0{c.symbol}\0{c.text}"),
        )
        for c, counts in zip(analysis.chunks, analysis.tokens, strict=True)
    ]
    return FileRows(analysis.language, chunks, list(map(tuple, analysis.symbols)))
