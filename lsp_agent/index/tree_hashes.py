"""The files of a tree that the local index lacks or holds another version of, with their content hashes.

A laptop joining the team index must know every such file's content hash (a file is reused only when its
content hash matches), so the walk runs once, with the stat it makes anyway, and a few threads read and hash
files while it goes on (reading and BLAKE2b release the GIL). Where git vouches for a file (team_git.py), its
hashing waits: the snapshot may hold the same blob, whose content hash it knows.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lsp_agent.index.models import IndexConfig
from lsp_agent.index.pipeline import paused_gc
from lsp_agent.index.rows import text_hash
from lsp_agent.index.store import IndexStore
from lsp_agent.workspace.walk import WalkedFile, walk_files

HASH_THREADS = 4  # files read and hashed at once while the tree is walked
HASH_BATCH = 64  # files per task

Candidate = tuple[str, int, int, str]  # path, size, mtime_ns, content hash
Vouched = tuple[WalkedFile, str]  # a file git reports unmodified, with its blob id


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


def hash_files(entries: list[WalkedFile]) -> list[Candidate]:
    """(path, size, mtime, content hash) of walked files, read and hashed in threads (unreadable ones left out)."""
    with ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="lsp-agent-hash") as pool:
        parts = [entries[i : i + HASH_BATCH] for i in range(0, len(entries), HASH_BATCH)]
        digests = pool.map(_hashes, [[entry.path for entry in part] for part in parts])
        return [
            (entry.rel, entry.size, entry.mtime_ns, digest)
            for part, found in zip(parts, digests, strict=True)
            for entry, digest in zip(part, found, strict=True)
            if digest is not None
        ]


def seed_candidates(
    root: Path,
    config: IndexConfig,
    store: IndexStore,
    walked: list[WalkedFile],
    vouched_by: Future[tuple[int, dict[str, str]]] | None = None,
) -> tuple[list[Candidate], list[Vouched]]:
    """(path, size, mtime, content hash) of the tree's files the local index lacks or holds another version of.

    Every file the walk finds is appended to `walked` (the refresh that follows reuses the walk). With
    `vouched_by` (team_git.vouched_files(): the latest mtime it vouches for and rel path -> blob id of the files
    git reports unmodified, arriving while the walk runs), the files it names are returned apart, unread, with
    their blob ids: (hashed candidates, vouched files).
    """
    known = store.files()
    todo: list[WalkedFile] = []
    vouched: list[Vouched] = []
    waiting: list[WalkedFile] = []  # walked before git answered
    blobs: dict[str, str] | None = None if vouched_by is not None else {}
    settled = 0  # the latest mtime git vouches for
    pending: list[str] = []  # paths of the batch being filled
    batches = []

    def take(entry: WalkedFile) -> None:
        nonlocal pending
        blob = blobs.get(entry.rel)  # type: ignore[union-attr]
        if blob is not None and entry.mtime_ns <= settled:
            vouched.append((entry, blob))
            return
        todo.append(entry)
        pending.append(entry.path)
        if len(pending) == HASH_BATCH:
            batches.append(pool.submit(_hashes, pending))
            pending = []

    with ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="lsp-agent-hash") as pool, paused_gc():
        for entry in walk_files(root, exclude=config.exclude, max_file_size=config.max_file_size):
            walked.append(entry)
            rec = known.get(entry.rel)
            if rec is not None and rec.size == entry.size and rec.mtime_ns == entry.mtime_ns:
                continue
            if blobs is None and vouched_by.done():  # type: ignore[union-attr]
                settled, blobs = vouched_by.result()  # type: ignore[union-attr]
                for early in waiting:
                    take(early)
            if blobs is None:
                waiting.append(entry)
            else:
                take(entry)
        if blobs is None:
            settled, blobs = vouched_by.result()  # type: ignore[union-attr]
            for early in waiting:
                take(early)
        if pending:
            batches.append(pool.submit(_hashes, pending))
        digests = [digest for batch in batches for digest in batch.result()]
    return _changed(todo, digests, known), vouched


def _changed(todo: list[WalkedFile], digests: list[str | None], known: dict) -> list[Candidate]:
    """Candidates of the hashed files that could be read and that the local index lacks or holds another version of."""
    out = []
    for entry, digest in zip(todo, digests, strict=True):
        rec = known.get(entry.rel)
        if digest is not None and (rec is None or rec.hash != digest):
            out.append((entry.rel, entry.size, entry.mtime_ns, digest))
    return out


def vouched_candidates(
    vouched: list[Vouched], held: dict[str, str], stored: dict[str, tuple[str, int]]
) -> list[Candidate]:
    """Candidates of the files git vouched for: the snapshot's content hash where it recorded the same blob id
    and size for the path (the same bytes), else read and hashed. `held`: path -> the snapshot's content
    hash; `stored`: path -> (blob id, size) its indexer's git had unmodified."""
    same: list[Candidate] = []
    rest: list[WalkedFile] = []
    for entry, blob in vouched:
        digest = held.get(entry.rel)
        if digest is not None and stored.get(entry.rel) == (blob, entry.size):
            same.append((entry.rel, entry.size, entry.mtime_ns, digest))
        else:
            rest.append(entry)
    return same + hash_files(rest)
