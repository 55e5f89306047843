"""Path safety: every path the agent names is resolved inside the workspace root or refused."""

from __future__ import annotations

import functools
import os
import re
import stat
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

# Directories the agent may never write into, whatever the ignore rules say.
PROTECTED_DIRS = (".git",)
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux
MAX_NAME_BYTES = 255  # NAME_MAX on Linux
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|\\\\|//[?.]/)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PathError(ValueError):
    """A path the agent may not use: outside the root, through an escaping symlink, or not a regular file."""


@functools.lru_cache(maxsize=64)
def _real_root_str(abs_root: str) -> str:
    return os.path.realpath(abs_root)


def _real_root(root: Path) -> Path:
    """The root with every symlink resolved (the reference all containment checks use)."""
    return Path(_real_root_str(os.path.abspath(root)))


def resolve_in_workspace(root: Path, rel: str) -> Path:
    """Resolve `rel` (relative to root, or absolute inside it) to a real absolute path inside the root.

    Raises PathError for empty or malformed paths, `..` escapes, absolute paths elsewhere and symlinks whose
    target lies outside the root. The path itself need not exist (write_file creates files).
    """
    return Path(_resolve(root, rel)[1])


def _resolve(root: Path, rel: str) -> tuple[str, str]:
    """(real root, real path) as strings; see resolve_in_workspace."""
    text = _plain_path(rel)
    abs_root = os.path.abspath(root)
    root_real = _real_root_str(abs_root)
    if text.startswith("~"):
        text = os.path.expanduser(text)
    candidate = text if os.path.isabs(text) else os.path.join(abs_root, text)
    real = os.path.realpath(candidate)
    if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
        norm = os.path.normpath(candidate)
        if norm == abs_root or norm.startswith(abs_root.rstrip(os.sep) + os.sep):
            raise PathError(f"{rel}: a symlink on this path leads outside the workspace root; refused")
        hint = ""
        if os.path.isabs(text) and os.path.lexists(os.path.join(abs_root, text.lstrip("/\\"))):
            hint = f" (did you mean {text.lstrip('/')!r}?)"
        raise PathError(
            f"{rel}: outside the workspace root ({root_real}); use a path relative to the root{hint}"
        )
    return root_real, real


def _plain_path(rel: object) -> str:
    """The path the model meant as a POSIX string: file:// URIs decoded, backslashes as slashes.

    Raises PathError for non-strings, empty paths, NUL and control characters, Windows drive and UNC paths,
    other URI schemes and paths longer than the system allows.
    """
    if not isinstance(rel, str):
        raise PathError(f"path must be a string, got {type(rel).__name__}")
    text = rel.strip()
    if "\x00" in text:
        raise PathError("path contains a NUL character; give a plain path relative to the workspace root")
    if _CONTROL.search(text):
        raise PathError("path contains a control character (newline, tab, ...); give a plain relative path")
    if not text:
        raise PathError("path is empty; give a path relative to the workspace root, e.g. 'src/main.py'")
    if text.lower().startswith("file:"):
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost"):
            raise PathError(
                f"{rel}: a file:// URI on another host; use a path relative to the workspace root"
            )
        text = unquote(parts.path)
        if "\x00" in text or not text:
            raise PathError(f"{rel}: not a usable file:// URI; use a path relative to the workspace root")
    elif re.match(r"^[A-Za-z][A-Za-z0-9+.-]+://", text):
        raise PathError(f"{rel}: a URL, not a workspace path; use a path relative to the workspace root")
    if _WINDOWS_ABSOLUTE.match(text):
        raise PathError(
            f"{rel}: a Windows drive or network path; this workspace uses POSIX paths relative to its root, "
            "e.g. 'src/main.py'"
        )
    text = text.replace("\\", "/")
    if len(text) > MAX_PATH_CHARS or any(len(p.encode("utf-8")) > MAX_NAME_BYTES for p in text.split("/")):
        raise PathError(
            f"path is too long ({len(text):,} characters; the limits are {MAX_PATH_CHARS:,} in all and "
            f"{MAX_NAME_BYTES} bytes per name); give a shorter path relative to the workspace root"
        )
    return text


def relative_posix(root: Path, path: Path) -> str:
    """The POSIX path of an absolute in-root path relative to the root ("." for the root itself)."""
    root_real = _real_root(root)
    try:
        rel = Path(path).relative_to(root_real)
    except ValueError:
        rel = Path(path).absolute().relative_to(Path(root).absolute())
    text = PurePosixPath(*rel.parts).as_posix() if rel.parts else "."
    return text


def index_rel(root: Path, path: Path | str) -> str:
    """The POSIX path, relative to the (resolved) root, the index keys a file by; ValueError outside the root.

    Unlike normalize_rel, a relative path is taken as written (the file may not exist yet or any more).
    """
    p = Path(path)
    if p.is_absolute():
        # the resolved path first (a symlinked parent), else the path as written
        inside = [c for c in ([p.resolve()] if p.exists() else []) + [p] if c.is_relative_to(root)]
        if not inside:
            raise ValueError(f"{path} is outside the workspace {root}")
        text = inside[0].relative_to(root).as_posix()
    else:
        text = PurePosixPath(str(path).replace("\\", "/")).as_posix()
    parts = [x for x in text.split("/") if x not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"not a file path inside the workspace: {path}")
    return "/".join(parts)


def normalize_rel(root: Path, rel: str) -> str:
    """Canonical POSIX form of a workspace path (resolved and made relative), refusing escapes."""
    return resolve_key(root, rel)[0]


def resolve_key(root: Path, rel: str) -> tuple[str, Path]:
    """(canonical POSIX rel path, real absolute path) of a workspace path, refusing escapes."""
    root_real, real = _resolve(root, rel)
    if real == root_real:
        return ".", Path(real)
    key = real[len(root_real.rstrip(os.sep)) + 1 :]
    if os.sep != "/":
        key = key.replace(os.sep, "/")
    return key, Path(real)


def require_regular_file(path: Path, rel: str) -> os.stat_result:
    """stat `path` and refuse anything but a regular file: FileNotFoundError, IsADirectoryError or PathError."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{rel}: file not found") from None
    except OSError as exc:
        raise PathError(f"{rel}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{rel}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise PathError(f"{rel}: is {describe_mode(st.st_mode)}, not a regular file; refused")
    return st


def describe_mode(mode: int) -> str:
    """A human name for a file type ('a FIFO', 'a character device', ...)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def check_writable_rel(rel: str) -> None:
    """Refuse writes into protected directories such as .git."""
    first = rel.split("/", 1)[0]
    if first in PROTECTED_DIRS:
        raise PathError(f"{rel}: writing inside {first}/ is not allowed")
