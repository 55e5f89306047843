"""Walk a workspace the way git sees it: .gitignore rules, no hidden dirs, no escaping symlinks, no secret files."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pathspec

from lsp_agent.workspace.secrets import SecretFiles, secret_files

# The default secret patterns: the index, the scratch copy and the searches never see these files.
DEFAULT_SECRETS = secret_files()

BINARY_SNIFF_BYTES = 8192
GITIGNORE = ".gitignore"


def is_binary_file(path: Path) -> bool:
    """True when the first 8 KiB hold a NUL byte or are not valid UTF-8 (unreadable files count as binary)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(BINARY_SNIFF_BYTES)
    except OSError:
        return True
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut off by the prefix boundary is still text.
        cut = len(head) == BINARY_SNIFF_BYTES and exc.reason == "unexpected end of data"
        return not (cut and exc.start >= len(head) - 3)
    return False


@dataclass(frozen=True)
class _IgnoreLayer:
    """The patterns of one .gitignore (or the extra excludes), relative to the directory holding them."""

    base: str  # POSIX path of the directory relative to the root ("" for the root)
    spec: pathspec.GitIgnoreSpec

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no pattern matched."""
        if self.base:
            prefix = self.base + "/"
            if not rel.startswith(prefix):
                return None
            rel = rel[len(prefix) :]
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _load_gitignore(directory: Path, base: str) -> _IgnoreLayer | None:
    """Parse directory/.gitignore, or None when there is none (or it cannot be read)."""
    try:
        text = (directory / GITIGNORE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    return _IgnoreLayer(base, spec) if len(spec.patterns) else None


def _exclude_layer(exclude: Sequence[str]) -> _IgnoreLayer | None:
    """The caller's extra patterns, applied last so they win over any .gitignore."""
    patterns = [p for p in exclude if p and p.strip()]
    return _IgnoreLayer("", pathspec.GitIgnoreSpec.from_lines(patterns)) if patterns else None


def _ignored(layers: Sequence[_IgnoreLayer], rel: str, is_dir: bool) -> bool:
    """Git precedence: later (deeper) layers override earlier ones; the last matching pattern wins."""
    result = False
    for layer in layers:
        verdict = layer.verdict(rel, is_dir)
        if verdict is not None:
            result = verdict
    return result


def _skip_dir_name(name: str) -> bool:
    """.git and every hidden directory are never walked."""
    return name.startswith(".")


def _inside(real: str, root_real: str) -> bool:
    """True when the resolved path `real` is the root or below it."""
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def walk_workspace(
    root: Path,
    *,
    exclude: Sequence[str] = (),
    include_dirs: bool = False,
    max_file_size: int | None = None,
    skip_binary: bool = False,
    under: str = "",
    secrets: SecretFiles | None = DEFAULT_SECRETS,
) -> Iterator[Path]:
    """Yield the workspace's files (and directories if asked) as absolute paths, sorted and deterministic.

    `under` (a POSIX path relative to the root) walks only that directory's subtree, with the same ignore rules
    as a walk from the root: nothing when the directory itself is ignored, hidden, a symlink or missing.
    Secret files (`secrets`; None walks them too) are left out.
    """
    for path, _rel, _is_dir, _st in _walk(
        Path(root).absolute(), exclude, include_dirs, max_file_size, skip_binary, under, secrets
    ):
        yield Path(path)


class WalkedFile(NamedTuple):
    """A file the walk found: absolute path, POSIX path relative to the root, and the walk's stat of it."""

    path: str
    rel: str
    size: int
    mtime_ns: int


def walk_files(
    root: Path, *, exclude: Sequence[str] = (), max_file_size: int | None = None
) -> Iterator[WalkedFile]:
    """walk_workspace()'s files with their size and mtime, from the stat the walk made (no Path objects)."""
    for path, rel, _is_dir, st in _walk(
        Path(root).absolute(), exclude, False, max_file_size, False, "", DEFAULT_SECRETS
    ):
        yield WalkedFile(path, rel, st.st_size, st.st_mtime_ns)


def walk_entries(
    root: Path,
    *,
    exclude: Sequence[str] = (),
    include_dirs: bool = False,
    under: str = "",
    secrets: SecretFiles | None = DEFAULT_SECRETS,
) -> Iterator[tuple[str, bool]]:
    """Like walk_workspace, but (POSIX path relative to the root, is_dir) pairs: no Path objects, no extra stat."""
    for _path, rel, is_dir, _st in _walk(
        Path(root).absolute(), exclude, include_dirs, None, False, under, secrets
    ):
        yield rel, is_dir


def _walk(
    root: Path,
    exclude: Sequence[str],
    include_dirs: bool,
    max_file_size: int | None,
    skip_binary: bool,
    under: str,
    secrets: SecretFiles | None,
) -> Iterator[tuple[str, str, bool, os.stat_result]]:
    """(absolute path, POSIX rel path, is_dir, stat) of every walked entry."""
    root_real = os.path.realpath(root)
    extra = _exclude_layer(exclude)

    def walk(
        directory: str, rel_dir: str, layers: tuple[_IgnoreLayer, ...]
    ) -> Iterator[tuple[str, str, bool, os.stat_result]]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        own = _load_gitignore(Path(directory), rel_dir) if any(e.name == GITIGNORE for e in entries) else None
        if own is not None:
            layers = layers + (own,)
        check = layers + ((extra,) if extra else ())
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue  # dangling symlink or vanished file
            is_link = entry.is_symlink()
            if is_link and not _link_walkable(entry.path, root_real, secrets):
                continue
            if stat.S_ISDIR(st.st_mode):
                if is_link or _skip_dir_name(entry.name) or _ignored(check, rel, True):
                    continue
                if secrets is not None and secrets.is_secret(rel, is_dir=True):
                    continue  # a directory link inside the root only repeats files walked at their real path
                if include_dirs:
                    yield entry.path, rel, True, st
                yield from walk(entry.path, rel, layers)
            elif stat.S_ISREG(st.st_mode):
                if _ignored(check, rel, False) or (secrets is not None and secrets.is_secret(rel)):
                    continue
                if max_file_size is not None and st.st_size > max_file_size:
                    continue
                if skip_binary and is_binary_file(Path(entry.path)):
                    continue
                yield entry.path, rel, False, st

    start = _subtree_start(root, under, extra)
    if secrets is not None and secrets.is_secret(under.strip("/"), is_dir=True):
        start = None  # a secret directory: nothing below it is walked
    if start is not None:
        directory, rel_dir, layers = start
        yield from walk(str(directory), rel_dir, layers)


def _link_walkable(path: str, root_real: str, secrets: SecretFiles | None) -> bool:
    """A symlink is walked when it stays inside the root and does not lead to a secret file."""
    real = os.path.realpath(path)
    if not _inside(real, root_real):
        return False
    return secrets is None or not secrets.is_secret(os.path.relpath(real, root_real).replace(os.sep, "/"))


def _subtree_start(
    root: Path, under: str, extra: _IgnoreLayer | None
) -> tuple[Path, str, tuple[_IgnoreLayer, ...]] | None:
    """(directory, rel path, ignore layers above it) to start a walk at `under`, or None when it is not walked."""
    parts = [p for p in under.strip("/").split("/") if p not in ("", ".")]
    directory, layers = root, ()
    for i, part in enumerate(parts):
        own = _load_gitignore(directory, "/".join(parts[:i]))
        if own is not None:
            layers = layers + (own,)
        check = layers + ((extra,) if extra else ())
        if part == ".." or _skip_dir_name(part) or _ignored(check, "/".join(parts[: i + 1]), True):
            return None
        directory = directory / part
        if directory.is_symlink() or not directory.is_dir():
            return None
    return directory, "/".join(parts), layers


def is_ignored(
    root: Path, path: Path, exclude: Sequence[str] = (), secrets: SecretFiles | None = DEFAULT_SECRETS
) -> bool:
    """True when `path` (absolute or relative to root) would not be walked: gitignored, hidden dir, secret, outside."""
    root = Path(root).absolute()
    path = Path(path)
    if not path.is_absolute():
        path = root / path
    try:
        rel_parts = path.absolute().relative_to(root).parts
    except ValueError:
        return True
    if not rel_parts:
        return False
    real = os.path.realpath(path)
    if not _inside(real, os.path.realpath(root)):
        return True
    layers: list[_IgnoreLayer] = []
    extra = _exclude_layer(exclude)
    directory = root
    for i, part in enumerate(rel_parts):
        own = _load_gitignore(directory, "/".join(rel_parts[:i]))
        if own is not None:
            layers.append(own)
        rel = "/".join(rel_parts[: i + 1])
        last = i == len(rel_parts) - 1
        is_dir = (not last) or path.is_dir()
        if is_dir and _skip_dir_name(part):
            return True
        if secrets is not None and secrets.is_secret(rel, is_dir=is_dir):
            return True
        if _ignored(layers + ([extra] if extra else []), rel, is_dir):
            return True
        directory = directory / part
    return False
