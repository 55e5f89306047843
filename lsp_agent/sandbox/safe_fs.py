"""File access inside directories the sandboxed code can change (the overlay's upper dir, a copied view):
every path component is opened relative to its parent with O_NOFOLLOW, so a symlink the code planted, even one
swapped in while we look, never leads the host outside the directory."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_DEPTH = 64  # directories nested deeper are not scanned (nor proposed)


def _parts(rel: str) -> list[str]:
    """The components of a relative POSIX path; refuses empty, absolute, `.` and `..` components."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise OSError(errno.EINVAL, f"not a plain relative path: {rel!r}")
    return parts


@contextlib.contextmanager
def parent_dir(base: Path, rel: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(fd of the directory holding `rel`, its last name); directories on the way are never symlinks."""
    parts = _parts(rel)
    fd = os.open(base, DIR_FLAGS)
    try:
        for name in parts[:-1]:
            child = _open_dir(fd, name, create)
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _open_dir(fd: int, name: str, create: bool) -> int:
    """Open the directory `name` in `fd` without following a symlink; with `create`, make it, replacing a symlink
    or file that stands in its place."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=fd)  # ELOOP/ENOTDIR on a symlink or a file
    except OSError as exc:
        if not create or exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            raise
    remove(fd, name)
    os.mkdir(name, 0o755, dir_fd=fd)
    return os.open(name, DIR_FLAGS, dir_fd=fd)


def read_regular(base: Path, rel: str, limit: int) -> bytes:
    """The bytes of the regular file `base/rel`; OSError for symlinks, FIFOs, devices or more than `limit` bytes."""
    with parent_dir(base, rel) as (dir_fd, name):
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"{st.st_size:,} bytes is too large to propose")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(errno.EFBIG, f"more than {limit:,} bytes is too large to propose")
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(base: Path, rel: str, data: bytes, mode: int | None = None) -> None:
    """Write `base/rel` as a fresh regular file (whatever was there, a symlink included, is replaced); the mode is
    `mode`, else the replaced regular file's, else 0o644."""
    with parent_dir(base, rel, create=True) as (dir_fd, name):
        if mode is None:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
            except FileNotFoundError:
                pass
        remove(dir_fd, name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o644 if mode is None else mode, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # the umask must not change it
            f.write(data)


def unlink(base: Path, rel: str) -> None:
    """Remove the non-directory `base/rel` if it exists (the link itself for a symlink)."""
    try:
        with parent_dir(base, rel) as (dir_fd, name):
            remove(dir_fd, name)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # a symlinked parent: nothing of ours to remove there
            raise


def remove(dir_fd: int, name: str) -> None:
    """Unlink `name` in `dir_fd` unless it is missing or a real directory."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)


def scan(base: Path, skip_dir: Callable[[str], bool]) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """(rel, lstat) of every non-directory under `base`, and the directories left out for being more than
    MAX_DEPTH deep; directories named so that skip_dir(name) are not entered. Works at any path length."""
    found: list[tuple[str, os.stat_result]] = []
    too_deep: list[str] = []

    def walk(fd: int, prefix: str, depth: int) -> None:
        with os.scandir(fd) as it:
            entries = list(it)
        for entry in entries:
            rel = prefix + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                found.append((rel, st))
            elif skip_dir(entry.name):
                continue
            elif depth >= MAX_DEPTH:
                too_deep.append(rel)
            else:
                try:
                    child = os.open(entry.name, DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                try:
                    walk(child, rel + "/", depth + 1)
                finally:
                    os.close(child)

    try:
        root = os.open(base, DIR_FLAGS)
    except OSError:
        return [], []
    try:
        walk(root, "", 1)
    finally:
        os.close(root)
    return found, too_deep
