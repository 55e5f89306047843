"""What the index writes: files the walk finds changed, each parsed file's rows, editor buffers' rows, vectors."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from lsp_agent.index.chunking import ParsedFile, analyze_with_tree
from lsp_agent.index.embeddings import Embedder, embedding_text
from lsp_agent.index.models import IndexConfig
from lsp_agent.index.pipeline import PARALLEL_MIN_FILES, FileJob, FileResult, Workers
from lsp_agent.index.rows import FileRows, file_rows, text_hash
from lsp_agent.index.store import BINARY_LANGUAGE, FileRecord, IndexStore
from lsp_agent.index.vector_cache import SharedVectors
from lsp_agent.workspace.walk import WalkedFile, walk_files

Progress = Callable[[int, int, str], None]
EMBED_BATCH = 256
BINARY = FileRows(BINARY_LANGUAGE, [], [], b"")
MAX_KEPT_TREES = 16  # parse trees of recent buffers, for incremental parsing of their next versions


def changed_files(
    root: Path,
    config: IndexConfig,
    known: dict[str, FileRecord],
    workers: Workers,
    walked: list[WalkedFile] | None = None,
) -> tuple[list[FileJob], set[str]]:
    """Jobs for the files whose size or mtime differ from the index, and every indexable path the walk saw.

    The workers are started as soon as there is enough work for them, so they boot while the walk goes on.
    `walked`: the files of a walk made just before (seeding from the team index), instead of walking again.
    """
    jobs: list[FileJob] = []
    seen: set[str] = set()
    files: Iterable[WalkedFile] = walked
    if walked is None:  # walked lazily: the workers start while the walk goes on
        files = walk_files(root, exclude=config.exclude, max_file_size=config.max_file_size)
    for path, rel, size, mtime_ns in files:
        seen.add(rel)
        rec = known.get(rel)
        if rec is not None and rec.size == size and rec.mtime_ns == mtime_ns:
            continue
        jobs.append(FileJob(rel, path, size, mtime_ns, rec.hash if rec else None))
        if len(jobs) == PARALLEL_MIN_FILES:
            workers.start()
    return jobs, seen


def store_result(
    store: IndexStore,
    known: dict[str, FileRecord],
    result: FileResult,
    fresh: bool,
    removed: list[int],
    added: list[tuple[int, str, bytes]],
) -> bool:
    """Write one job's outcome (collecting removed and added chunks); True when the file was parsed."""
    job = result.job
    if result.status == "same":
        rec = known[job.path]
        store.touch(rec.id, job.size, job.mtime_ns)
    elif result.status == "skipped" and result.digest:
        # Binary: remembered without chunks, so the next refresh skips it by size and mtime.
        gone, _ = store.replace_file(job.path, job.size, job.mtime_ns, result.digest, BINARY, new=fresh)
        removed.extend(gone)
    elif result.status == "skipped":  # unreadable now: forget it, retry next time
        if job.path in known:
            removed.extend(store.delete_file(known[job.path].id))
    else:
        assert result.rows is not None
        gone, new = store.replace_file(
            job.path, job.size, job.mtime_ns, result.digest, result.rows, new=fresh
        )
        removed.extend(gone)
        added.extend(new)
        return True
    return False


def embed_missing(
    embedder: Embedder | None,
    store: IndexStore,
    progress: Progress | None,
    cancel: threading.Event | None,
    shared: SharedVectors | None = None,
) -> None:
    """Compute vectors for chunk texts that have none yet (only changed chunks after the first run).

    With `shared`, vectors of chunks any index on this machine embedded before are copied from its cache, and
    the new ones are added to it.
    """
    if embedder is None:
        return
    missing = store.missing_vectors(embedder.name)
    if shared is not None and missing:
        known = shared.get([m[0] for m in missing])
        if known:
            store.put_vectors(embedder.name, known.items())
            missing = [m for m in missing if m[0] not in known]
    for i in range(0, len(missing), EMBED_BATCH):
        if cancel is not None and cancel.is_set():
            return
        batch = missing[i : i + EMBED_BATCH]
        vectors = embedder.embed([embedding_text(p, s, t) for _, p, s, t in batch])
        items = list(zip([b[0] for b in batch], vectors, strict=True))
        store.put_vectors(embedder.name, items)
        if shared is not None:
            shared.put(items)
        if progress:
            progress(min(i + EMBED_BATCH, len(missing)), len(missing), "embeddings")


def store_buffers(
    store: IndexStore, pending: Mapping[str, str | None], trees: OrderedDict[str, ParsedFile]
) -> tuple[list[int], list[tuple[int, str, bytes]]]:
    """Write editor buffers' texts (None: the file is gone) in the open transaction; (removed, added) chunks.

    `trees` keeps the last parse of recent buffers, so the next version of a buffer is parsed incrementally.
    """
    removed: list[int] = []
    added: list[tuple[int, str, bytes]] = []
    for rel, text in pending.items():
        rec = store.file(rel)
        if text is None:
            trees.pop(rel, None)
            if rec is not None:
                removed.extend(store.delete_file(rec.id))
            continue
        digest = text_hash(text)
        if rec is not None and rec.hash == digest:
            continue
        # size/mtime -1: the next refresh compares the disk content by hash and takes the disk version.
        analysis, parsed = analyze_with_tree(rel, text, trees.pop(rel, None))
        if parsed is not None:
            trees[rel] = parsed
            while len(trees) > MAX_KEPT_TREES:
                trees.popitem(last=False)
        gone, new = store.replace_file(rel, -1, -1, digest, file_rows(rel, analysis))
        removed.extend(gone)
        added.extend(new)
    return removed, added
