"""Git's own knowledge of a checkout: which files hold exactly the bytes of a git blob, without reading them.

A snapshot records the blob id of each file its indexer saw unmodified; a laptop whose git reports a file
unmodified with the same blob id (and the same size) holds the same bytes, so its content hash is the
snapshot's and the file need not be read. Only files whose checkout and check-in convert nothing are trusted
(no `text`, `eol`, `filter`, `ident` or `working-tree-encoding` attribute, `core.autocrlf` off): there a blob
id names the file's bytes. Files assumed unchanged or skipped by sparse checkout are not trusted either.
Without git, outside a repository or on any git failure, nothing is trusted and every file is read as before.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import time
from pathlib import Path

log = logging.getLogger(__name__)

BLOB_TABLE = "team_git_blobs"  # in a snapshot file: path, blob id and size of files git had unmodified
GIT_TIMEOUT = 30
CONVERTING = ("text", "eol", "filter", "ident", "working-tree-encoding")
REGULAR_MODES = ("100644", "100755")
SETTLED_NS = (
    2_000_000_000  # a file modified this shortly before git looked may have changed after: it is read
)


def _start(root: Path, *args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    """A git command in root, started (fsmonitor off: git stats the files itself)."""
    return subprocess.Popen(
        ["git", "-C", str(root), "-c", "core.fsmonitor=false", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _output(proc: subprocess.Popen[bytes]) -> bytes | None:
    """A started command's stdout when it exits with status 0, else None."""
    try:
        out, _ = proc.communicate(timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out if proc.returncode == 0 else None


def _index_entries(listing: bytes) -> dict[str, str]:
    """rel path -> blob id of `ls-files --stage -v -z`'s regular files at stage 0, neither assumed unchanged
    nor skipped by sparse checkout (tag H)."""
    blobs: dict[str, str] = {}
    for record in listing.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if (
            len(fields) == 4
            and fields[0] == b"H"
            and fields[3] == b"0"
            and fields[1].decode() in REGULAR_MODES
        ):
            blobs[os.fsdecode(path)] = fields[2].decode()
    return blobs


def _converted(attributes: bytes) -> set[str]:
    """The paths `check-attr -z` gave an attribute other than unspecified or unset (git converts them)."""
    fields = attributes.split(b"\0")
    return {
        os.fsdecode(fields[i])
        for i in range(0, len(fields) - 2, 3)
        if fields[i + 2] not in (b"unspecified", b"unset")
    }


def unmodified_blobs(root: Path) -> dict[str, str]:
    """rel path -> blob id of the files git reports unmodified and converts nothing for ({} without git).

    The git commands run at once: the index's entries, the files whose stat or content differ from them,
    the converting attributes of every indexed file, and core.autocrlf.
    """
    try:
        names = _start(root, "ls-files", "-z")
        procs = [
            _start(root, "ls-files", "--stage", "-v", "-z"),
            _start(root, "diff-files", "--name-only", "--relative", "-z"),
            _start(root, "check-attr", "-z", "--stdin", *CONVERTING, stdin=names.stdout),  # type: ignore[arg-type]
            _start(root, "config", "--get", "core.autocrlf"),
        ]
    except OSError:  # no git
        return {}
    names.stdout.close()  # type: ignore[union-attr]  # check-attr holds it
    listing, modified, attributes, autocrlf = (_output(proc) for proc in procs)
    names.wait()
    if autocrlf is not None and autocrlf.strip().lower() not in (b"false", b""):
        log.debug("core.autocrlf converts line endings in %s: every file is read", root)
        return {}
    if listing is None or modified is None or attributes is None or names.returncode != 0:
        return {}
    blobs = _index_entries(listing)
    for path in [*modified.split(b"\0"), *map(os.fsencode, _converted(attributes))]:
        blobs.pop(os.fsdecode(path), None)
    return blobs


def vouched_files(root: Path) -> tuple[int, dict[str, str]]:
    """(the latest mtime in ns a vouched file may have, unmodified_blobs()): a file whose walk stat is newer may
    have changed after git looked at it (the walk comes later), so only older ones are taken on git's word."""
    settled = time.time_ns() - SETTLED_NS
    try:
        return settled, unmodified_blobs(root)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:  # git misbehaving: read every file
        log.debug("git could not vouch for the files of %s: %s", root, exc)
        return settled, {}


def record_blobs(db: sqlite3.Connection, root: Path) -> int:
    """Store in a snapshot file the blob id and size of each indexed file git reports unmodified and whose
    stat is still the one it was indexed with (so its indexed content is that blob); returns how many."""
    blobs = unmodified_blobs(root)
    db.execute(f"DROP TABLE IF EXISTS {BLOB_TABLE}")  # a local index that once joined may hold one
    db.execute(
        f"CREATE TABLE {BLOB_TABLE}(path TEXT PRIMARY KEY, blob TEXT NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID"
    )
    rows = []
    for path, size, mtime_ns in db.execute("SELECT path, size, mtime_ns FROM files"):
        blob = blobs.get(path)
        if blob is None:
            continue
        try:
            st = os.stat(root / path)
        except OSError:
            continue
        if st.st_size == size and st.st_mtime_ns == mtime_ns:
            rows.append((path, blob, size))
    db.executemany(f"INSERT INTO {BLOB_TABLE} VALUES(?,?,?)", rows)
    return len(rows)


def stored_blobs(db: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    """path -> (blob id, size) a snapshot file recorded ({} for a file from before blob ids, or without git)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (BLOB_TABLE,)).fetchone():
        return {}
    return {
        path: (blob, size) for path, blob, size in db.execute(f"SELECT path, blob, size FROM {BLOB_TABLE}")
    }
