"""The index's public data types: configuration, statistics, search and symbol hits, and parsed pieces."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

DEFAULT_MAX_FILE_SIZE = 1_000_000


@dataclass
class IndexConfig:
    """How a workspace is indexed: size limit, extra exclude patterns, the embedding backend, worker priority."""

    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    exclude: list[str] = field(default_factory=list)
    embeddings: str = "none"  # none | local | any litellm embedding model string
    api_base: str | None = None
    api_key: str | None = None
    worker_niceness: int = 0  # added to the parsing processes' niceness (a background index yields the CPU)
    # The embedding vectors shared by every index on this machine (vector_cache.py); None: the default file
    # under the user's cache folder.
    embedding_cache: Path | None = None
    store: str | None = None  # a postgresql:// team index to seed from (team_sync.py); None: local only


@dataclass
class IndexStats:
    """Counts after a refresh (or of the current index); `parsed` is how many files were (re)parsed."""

    files: int
    chunks: int
    symbols: int
    seconds: float = 0.0
    parsed: int = 0


@dataclass
class SearchHit:
    """One ranked chunk: `path` is POSIX and relative to the root, lines are 1-based and inclusive."""

    path: str
    start: int
    end: int
    symbol: str | None
    kind: str
    score: float
    text: str


@dataclass
class SymbolHit:
    """A definition or reference of a name, with the line it is on."""

    name: str
    qualified_name: str | None
    role: str  # "definition" | "reference"
    kind: str
    path: str
    line: int
    end_line: int
    snippet: str


@dataclass(frozen=True)
class Chunk:
    """A searchable piece of a file: a definition, a class skeleton, module code or a line window."""

    start: int
    end: int
    symbol: str | None
    kind: str
    text: str


class Symbol(NamedTuple):
    """A definition or reference found by a tag query; lines are 1-based."""

    name: str
    qualified_name: str | None
    role: str
    kind: str
    line: int
    end_line: int


@dataclass
class FileAnalysis:
    """Everything the index keeps about one file version: chunks, their terms, definitions and identifiers."""

    language: str
    chunks: list[Chunk]
    tokens: list[tuple[int, bytes]]  # per chunk: (token count, tokens.pack_terms() of its term counts)
    symbols: list[Symbol]  # definitions; references are found on demand (chunking.file_symbols)
    identifiers: bytes = b""  # tokens.identifier_counts() of the whole text: which names the file mentions


def workspace_root(root: Path | str) -> Path:
    """The resolved folder of a workspace; FileNotFoundError, NotADirectoryError or PermissionError if unusable."""
    root = Path(root).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"workspace folder not found: {root}")
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise PermissionError(f"workspace folder is not readable: {root}")
    return root.resolve()
