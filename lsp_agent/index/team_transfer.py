"""Moving a snapshot's SQLite file in and out of PostgreSQL: zstd frames, one per row, decompressed in parallel.

The indexer cuts the file into pieces of FRAME_BYTES and compresses each as an independent zstd frame (its
content size and checksum in it), one row of lsp_snapshot_parts per frame, all in one transaction. A laptop
streams the rows and decompresses frames in a few threads (zstd releases the GIL), each written at its offset.
Files stored by earlier versions are one zstd stream cut into rows; they are still read, in one thread.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.index.store import SCHEMA_VERSION

if TYPE_CHECKING:  # psycopg is imported only when a team index is used
    from lsp_agent.index.team_store import TeamStore

FRAME_BYTES = 8 << 20  # uncompressed bytes per zstd frame (and row of lsp_snapshot_parts)
ZSTD_LEVEL = 3
DECOMPRESS_THREADS = 2  # frames decompressed and written at once on a laptop
IN_FLIGHT = 6  # frames read ahead of the ones being written (bounds memory to about 6 x 10 MB)


class SnapshotFileError(RuntimeError):
    """A downloaded snapshot file is unusable (checksum, size, schema or format); the rows are copied instead."""


def zstd():  # noqa: ANN201 - the zstandard module, or None without the postgres extra
    """The zstandard module, or None when it is not installed (snapshot files are then skipped)."""
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def upload_file(team: TeamStore, snapshot: int, path: Path, model: str | None) -> bool:
    """Store a snapshot file in one transaction (False when the snapshot has one already)."""
    z = zstd()
    raw = path.stat().st_size
    local = threading.local()

    def frame(block: bytes) -> bytes:
        if not hasattr(local, "compressor"):  # a compressor is not for two threads at once
            local.compressor = z.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
        return local.compressor.compress(block)

    with team.errors(), team.conn.transaction():
        mine = team.conn.execute(
            "INSERT INTO lsp_snapshot_dbs(snapshot_id, schema, model, raw_bytes) "
            "VALUES(%s,%s,%s,%s) ON CONFLICT DO NOTHING RETURNING snapshot_id",
            (snapshot, SCHEMA_VERSION, model, raw),
        ).fetchone()
        if mine is None:
            return False
        with (
            open(path, "rb") as src,
            ThreadPoolExecutor(os.cpu_count() or 2, thread_name_prefix="lsp-agent-zstd") as pool,
            team.conn.cursor().copy("COPY lsp_snapshot_parts(snapshot_id, part, data) FROM STDIN") as copy,
        ):
            ahead: deque[Future[bytes]] = deque()
            part = 0
            while True:
                block = src.read(FRAME_BYTES)
                if block or part + len(ahead) == 0:  # an empty file is one empty frame
                    ahead.append(pool.submit(frame, block))
                while ahead and (not block or len(ahead) >= IN_FLIGHT):
                    copy.write_row((snapshot, part, ahead.popleft().result()))
                    part += 1
                if not block:
                    break
    return True


def download(team: TeamStore, snapshot: int, raw_bytes: int, dest: Path) -> None:
    """Write a snapshot file to dest as its rows arrive; SnapshotFileError when it is not whole.

    zstd checks each frame against its checksum (XXH64) as it decompresses; each frame's size, and the file's,
    catch a file cut short.
    """
    with team.errors(), team.conn.cursor(binary=True) as cur:
        stream = cur.stream(
            "SELECT data FROM lsp_snapshot_parts WHERE snapshot_id=%s ORDER BY part", (snapshot,)
        )
        try:
            rows = (bytes(data) for (data,) in stream)
            first = next(rows, b"")
            whole = itertools.chain([first], rows)
            if _content_size(snapshot, first) < 0:  # one stream, of size unknown when it began
                size = _one_stream(snapshot, whole, dest)
            else:
                size = _frames(snapshot, whole, dest)
        finally:
            # Stopped early (a damaged frame): the stream holds the connection's lock until closed, which
            # garbage collection would do only some time later (its frames are in the error's traceback).
            stream.close()
    if size != raw_bytes:
        raise SnapshotFileError(f"snapshot file {snapshot} is incomplete ({size} of {raw_bytes} bytes)")


def _content_size(snapshot: int, data: bytes) -> int:
    """The uncompressed size a zstd frame's header gives (-1: not given); SnapshotFileError if it has none."""
    try:
        return zstd().frame_content_size(data)
    except Exception as exc:  # zstd.ZstdError
        raise SnapshotFileError(f"snapshot file {snapshot} is damaged: {exc}") from None


def _frames(snapshot: int, rows: Iterator[bytes], dest: Path) -> int:
    """Decompress rows that are independent frames in threads, each written at its offset; the bytes written."""
    z = zstd()
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # as open(): the umask applies

    def write_frame(data: bytes, offset: int, size: int) -> None:
        try:
            block = z.ZstdDecompressor().decompress(data)
        except z.ZstdError as exc:
            raise SnapshotFileError(f"snapshot file {snapshot} is damaged: {exc}") from None
        if len(block) != size:
            raise SnapshotFileError(f"snapshot file {snapshot} is damaged: a frame of the wrong size")
        view = memoryview(block)
        while view:
            view = view[os.pwrite(fd, view, offset + len(block) - len(view)) :]

    offset = 0
    try:
        with ThreadPoolExecutor(DECOMPRESS_THREADS, thread_name_prefix="lsp-agent-unzstd") as pool:
            pending: deque[Future[None]] = deque()
            for data in rows:
                size = _content_size(snapshot, data)
                if size < 0:
                    raise SnapshotFileError(f"snapshot file {snapshot} is damaged: a frame without its size")
                pending.append(pool.submit(write_frame, data, offset, size))
                offset += size
                while len(pending) >= IN_FLIGHT or (pending and pending[0].done()):
                    pending.popleft().result()
            while pending:
                pending.popleft().result()
    finally:
        os.close(fd)
    return offset


def _one_stream(snapshot: int, rows: Iterator[bytes], dest: Path) -> int:
    """Decompress rows that are one zstd stream (files of earlier versions), a thread writing while the next row
    is read and decompressed; the bytes written."""
    decompressor = zstd().ZstdDecompressor().decompressobj()
    size = 0
    blocks: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
    failed: list[OSError] = []
    writer = threading.Thread(target=_write_blocks, args=(dest, blocks, failed), name="lsp-agent-team-write")
    writer.start()
    try:
        for data in rows:
            try:
                block = decompressor.decompress(data)
            except Exception as exc:  # zstd.ZstdError: a damaged part
                raise SnapshotFileError(f"snapshot file {snapshot} is damaged: {exc}") from None
            blocks.put(block)
            size += len(block)
    finally:
        blocks.put(None)
        writer.join()
    if failed:
        raise failed[0]
    if not decompressor.eof:
        raise SnapshotFileError(f"snapshot file {snapshot} is incomplete (its zstd stream is cut short)")
    return size


def _write_blocks(dest: Path, blocks: queue.Queue[bytes | None], failed: list[OSError]) -> None:
    """Write queued blocks to dest until None; a write error is kept in `failed` (the queue is still drained)."""
    out = None
    while (block := blocks.get()) is not None:
        try:
            if not failed:
                out = out or open(dest, "wb")  # noqa: SIM115 - closed below, after the last block
                out.write(block)
        except OSError as exc:
            failed.append(exc)
    try:
        if out is not None:
            out.close()
    except OSError as exc:
        failed.append(exc)
