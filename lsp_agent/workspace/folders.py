"""Workspace folders a run may read besides its own: their names, how paths address them, which an ask opens.

A run works in one folder (its root: every write goes there). When the ask asks for it (`readFolders` /
`--read-folder`, or an `@name/...` mention of a path in another folder), other workspace folders are open for
reading. Their files are addressed as `@name/path` (`@name` alone is the folder's root), which cannot be mistaken for
a path of the run's own folder; an absolute path inside one of them works too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

FOLDER_MENTION = re.compile(r"(?<![\w@])@([\w.+-]+)(?=/|\b)")
_UNSAFE = re.compile(r"[^\w.+-]+")


class FolderError(ValueError):
    """A requested folder is not a workspace folder (the message lists the ones there are)."""


def folder_name(name: str | None, root: Path) -> str:
    """A folder's name as paths use it (`@name/...`): the editor's name or the directory's, without spaces or /."""
    text = _UNSAFE.sub("-", (name or "").strip()).strip("-.")
    if not text:
        text = _UNSAFE.sub("-", root.name).strip("-.") or "folder"
    return text


def named_folders(folders: Iterable[tuple[str | None, Path]]) -> dict[str, Path]:
    """{name: absolute root} for (name, root) pairs; a name taken twice gets -2, -3, ... (in the given order)."""
    named: dict[str, Path] = {}
    for raw, root in folders:
        base = folder_name(raw, root)
        name, n = base, 1
        while name in named:
            n += 1
            name = f"{base}-{n}"
        named[name] = Path(root).absolute()
    return named


def split_folder_path(text: str, names: Iterable[str]) -> tuple[str, str] | None:
    """("name", "rest") when `text` is `@name` or `@name/rest` for one of `names` ("." for the folder root)."""
    if not isinstance(text, str) or not text.startswith("@"):
        return None
    head, _, rest = text[1:].replace("\\", "/").partition("/")
    if head not in set(names):
        return None
    rest = rest.strip("/")
    return head, rest or "."


def mentioned_folders(task: str, names: Iterable[str]) -> list[str]:
    """The folder names `task` mentions as `@name/...` (or `@name`), each once, in order."""
    known = set(names)
    found: list[str] = []
    for match in FOLDER_MENTION.finditer(task):
        name = match.group(1)
        if name in known and name not in found:
            found.append(name)
    return found


@dataclass
class FolderAccess:
    """The folders of one run: its own (name, root) and the others, those open for reading named in `readable`."""

    own_name: str
    own_root: Path
    others: dict[str, Path] = field(default_factory=dict)  # every other workspace folder, by name
    readable: list[str] = field(default_factory=list)  # the names in `others` this run may read

    @property
    def read_roots(self) -> dict[str, Path]:
        """{name: root} of the folders open for reading."""
        return {name: self.others[name] for name in self.readable}

    def locate(self, text: str) -> tuple[str, str] | None:
        """(folder name, path inside it) when `text` addresses another folder (`@name/...` or an absolute path)."""
        if not isinstance(text, str):
            return None
        found = split_folder_path(text.strip(), self.others)
        if found is not None:
            return found
        plain = text.strip()
        if plain.startswith("file:"):
            plain = _uri_path(plain)
        if not os.path.isabs(plain):
            return None
        absolute = os.path.normpath(plain)
        own = str(self.own_root)
        if absolute == own or absolute.startswith(own.rstrip(os.sep) + os.sep):
            return None  # the run's own folder (also when another folder contains it)
        best: tuple[str, str] | None = None
        for name, root in self.others.items():
            base = str(root)
            if absolute == base or absolute.startswith(base.rstrip(os.sep) + os.sep):
                rest = os.path.relpath(absolute, base).replace(os.sep, "/")
                if best is None or len(base) > len(str(self.others[best[0]])):
                    best = (name, rest)
        return best

    def describe(self) -> str:
        """The note the model reads: which folder is its own, which it may read and how to address them."""
        lines = [
            f"Workspace folders: this run works in @{self.own_name} ({self.own_root}); plain paths are relative "
            "to it and every edit goes there."
        ]
        if self.readable:
            shown = ", ".join(f"@{n} ({self.others[n]})" for n in self.readable)
            example = self.readable[0]
            lines.append(
                f"Also open for reading, read-only: {shown}. Address their files as '@{example}/path/to/file' in "
                f"read_file, get_file_info, list_files (path='@{example}') and search_text (path='@{example}'); "
                "search_code and find_symbol search them too. Writing, editing or deleting their files is "
                "refused: change only files of your own folder."
            )
        closed = [n for n in self.others if n not in self.readable]
        if closed:
            lines.append(
                "Other workspace folders, not open to this run: " + ", ".join(f"@{n}" for n in closed) + "."
            )
        return "\n".join(lines)


def folder_access(
    own_root: Path,
    folders: Mapping[str, Path],
    requested: Iterable[str] = (),
    task: str = "",
) -> FolderAccess:
    """The access of a run in `own_root`: `requested` folders (names, paths or URIs) and those `task` mentions.

    FolderError names a requested folder that is not a workspace folder, with the list of those there are.
    """
    own_root = Path(own_root).absolute()
    own_name = next((n for n, r in folders.items() if r == own_root), folder_name(None, own_root))
    others = {n: r for n, r in folders.items() if r != own_root}
    readable: list[str] = []
    for wanted in requested:
        name = _match_folder(wanted, own_name, own_root, others)
        if name is not None and name not in readable:
            readable.append(name)
    for name in mentioned_folders(task, others):
        if name not in readable:
            readable.append(name)
    return FolderAccess(own_name, own_root, others, readable)


def _uri_path(uri: str) -> str:
    """The local path of a file:// URI (the text as is when it is not one)."""
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" and parts.netloc in ("", "localhost") else uri


def _match_folder(wanted: str, own_name: str, own_root: Path, others: Mapping[str, Path]) -> str | None:
    """The name of the folder `wanted` names (None for the run's own); FolderError when none matches."""
    text = str(wanted).strip().removeprefix("@").rstrip("/") if isinstance(wanted, str) else ""
    if text in others:
        return text
    if text == own_name:
        return None
    path: Path | None = None
    if text.startswith("file:"):
        path = Path(_uri_path(text)).absolute()
    elif text and ("/" in text or os.sep in text):
        path = Path(text).expanduser().absolute()
    if path is not None:
        if path == own_root:
            return None
        for name, root in others.items():
            if root == path:
                return name
    listing = ", ".join(f"@{n}" for n in [own_name, *others])
    raise FolderError(
        f"{wanted!r} is not a workspace folder, so it cannot be opened for reading; the folders are {listing} "
        "(name one of them, or open the folder in the editor first)"
    )


__all__ = [
    "FolderAccess",
    "FolderError",
    "folder_access",
    "folder_name",
    "mentioned_folders",
    "named_folders",
    "split_folder_path",
]
