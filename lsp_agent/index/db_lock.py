"""The lock that keeps other processes from opening a workspace's index while a joining laptop swaps its file in.

A connection opened on the old (empty) file in the instant before the swap would go on reading and writing a file
that is no longer the index, next to WAL files that now belong to the new one. So opening an index (connect and
the first read, which creates the WAL files) holds its directory's lock shared, and the swap holds it exclusive:
an opener either finishes before the swap (its WAL files then stop the swap) or waits and opens the new file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock (the swap's WAL check still applies)
    fcntl = None  # type: ignore[assignment]


@contextmanager
def index_dir_lock(db_path: Path, exclusive: bool = False) -> Iterator[None]:
    """Hold the lock of the directory of `db_path`: shared while opening, exclusive while replacing the file."""
    try:
        fd = os.open(db_path.parent, os.O_RDONLY) if fcntl is not None else -1
    except OSError:  # a folder we may not read: SQLite reports what matters when it opens the file
        fd = -1
    if fd < 0:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def use_wal(conn: sqlite3.Connection, wait: float = 120.0) -> None:
    """Put the connection's database in WAL mode, waiting up to `wait` seconds for another connection's write.

    SQLite answers a journal-mode change on a rollback-journal file that another connection is writing with
    "database is locked" at once, without its busy handler (a swapped-in team file, or a new index opened by
    the CLI and the server together), so the change is retried here.
    """
    deadline = time.monotonic() + wait
    pause = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.5)
