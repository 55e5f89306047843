"""The files of a tree that the local index lacks or holds another version of, with their content hashes.

A laptop joining the team index must read and hash every such file (a file is reused only when its content hash
matches), so the walk runs once, with the stat it makes anyway, and a few threads read and hash files while it
goes on (reading and BLAKE2b release the GIL).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsp_agent.index.models import IndexConfig
from lsp_agent.index.rows import text_hash
from lsp_agent.index.store import IndexStore
from lsp_agent.workspace.walk import WalkedFile, walk_files

HASH_THREADS = 4  # files read and hashed at once while the tree is walked
HASH_BATCH = 64  # files per task


def _hashes(paths: list[str]) -> list[str | None]:
    """Content hashes of files (None for one that cannot be read)."""
    out: list[str | None] = []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                out.append(text_hash(fh.read()))
        except OSError:
            out.append(None)
    return out


def seed_candidates(
    root: Path, config: IndexConfig, store: IndexStore, walked: list[WalkedFile]
) -> list[tuple[str, int, int, str]]:
    """(path, size, mtime, content hash) of the tree's files the local index lacks or holds another version of.

    Every file the walk finds is appended to `walked` (the refresh that follows reuses the walk).
    """
    known = store.files()
    todo: list[WalkedFile] = []
    pending: list[str] = []  # paths of the batch being filled
    batches = []
    with ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="lsp-agent-hash") as pool:
        for entry in walk_files(root, exclude=config.exclude, max_file_size=config.max_file_size):
            walked.append(entry)
            rec = known.get(entry.rel)
            if rec is not None and rec.size == entry.size and rec.mtime_ns == entry.mtime_ns:
                continue
            todo.append(entry)
            pending.append(entry.path)
            if len(pending) == HASH_BATCH:
                batches.append(pool.submit(_hashes, pending))
                pending = []
        if pending:
            batches.append(pool.submit(_hashes, pending))
        digests = [digest for batch in batches for digest in batch.result()]
    out = []
    for entry, digest in zip(todo, digests, strict=True):
        rec = known.get(entry.rel)
        if digest is not None and (rec is None or rec.hash != digest):
            out.append((entry.rel, entry.size, entry.mtime_ns, digest))
    return out
