"""`session/list` over the one conversation store: every front-end's conversations, newest first, by folder, paged.

Conversations started by the language server and by `lsp-agent ask` are listed beside ACP sessions: each has a
folder (`cwd`), a title (the one ACP gave it, else its first task), and the time it was last saved. The store is
read once; later lists stat every file and re-read only those that changed. Pages are cut by a cursor naming the
last entry shown (time and id), so a conversation saved between two pages moves to the top instead of shifting
every later page by one.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lsp_agent.agent.conversation.store import LEGACY_ACP_DIR, safe_name

log = logging.getLogger(__name__)

PAGE_SIZE = 50
TITLE_CHARS = 80


@dataclass(frozen=True)
class Listed:
    """What session/list shows of one stored conversation."""

    session_id: str
    cwd: str
    title: str | None
    updated: float  # seconds since the epoch
    additional_directories: tuple[str, ...] = ()
    front_end: str = ""

    @property
    def updated_at(self) -> str:
        """The ISO 8601 time ACP's updatedAt carries."""
        return iso_time(self.updated)

    def sort_key(self) -> tuple[float, str]:
        """Newest first, then by id (a total order the cursor can name)."""
        return (-self.updated, self.session_id)


def iso_time(seconds: float) -> str:
    """An epoch time as ISO 8601 UTC (`2026-11-28T09:00:00Z`)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def make_title(text: str) -> str | None:
    """A conversation title from a prompt: its first non-empty line, whitespace collapsed, cut at TITLE_CHARS."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"
    return None


def summarize(record: dict[str, Any], fallback_id: str, mtime: float) -> Listed | None:
    """The listing of one stored record (this version or an older ACP one); None when it names no folder."""
    acp = record.get("acp") if isinstance(record.get("acp"), dict) else {}
    root = record.get("root") or record.get("cwd")
    if not isinstance(root, str) or not root:
        return None
    session_id = record.get("id")
    if not isinstance(session_id, str) or safe_name(session_id) != fallback_id:
        session_id = fallback_id
    title = acp.get("title") if isinstance(acp.get("title"), str) else None
    if title is None:
        memory = record.get("memory") if isinstance(record.get("memory"), dict) else record
        exchanges = memory.get("exchanges") if isinstance(memory.get("exchanges"), list) else []
        first = exchanges[0] if exchanges and isinstance(exchanges[0], dict) else {}
        title = make_title(first["task"]) if isinstance(first.get("task"), str) else None
    saved = record.get("saved")
    extra = acp.get("additionalDirectories") if isinstance(acp.get("additionalDirectories"), list) else []
    return Listed(
        session_id,
        root,
        title,
        float(saved) if isinstance(saved, int | float) else mtime,
        tuple(d for d in extra if isinstance(d, str)),
        str(record.get("frontEnd") or ("acp" if "memory" in record else "")),
    )


def encode_cursor(entry: Listed) -> str:
    """An opaque cursor: the page after `entry`."""
    raw = json.dumps([entry.updated, entry.session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    """The sort key a cursor names; ValueError for one this agent did not hand out."""
    try:
        updated, session_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(updated, int | float) or not isinstance(session_id, str):
            raise TypeError
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"invalid cursor {cursor[:40]!r}: pass the nextCursor of an earlier session/list"
        ) from exc
    return (-float(updated), session_id)


class SessionLister:
    """The store's conversations as listings, each file re-read only when its size or time changed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[str, tuple[tuple[int, int], Listed | None]] = {}
        self._lock = threading.Lock()

    def listings(self) -> list[Listed]:
        """Every stored conversation that names a folder, newest first."""
        with self._lock:
            seen: dict[str, Listed] = {}
            files = self._files()
            for path, stat in files:
                entry = self._read(path, stat)
                if entry is not None and entry.session_id not in seen:
                    seen[entry.session_id] = entry
            for gone in set(self._cache) - {path for path, _ in files}:
                del self._cache[gone]
        return sorted(seen.values(), key=Listed.sort_key)

    def page(
        self, cwd: str | None = None, cursor: str | None = None, size: int = PAGE_SIZE
    ) -> tuple[list[Listed], str | None]:
        """One page of listings (of folder `cwd` when given) after `cursor`, and the cursor of the next page."""
        after = decode_cursor(cursor) if cursor else None
        folders = (
            {os.path.normpath(cwd), os.path.realpath(cwd)} if cwd else None
        )  # stored folders are resolved
        entries = [
            e
            for e in self.listings()
            if (folders is None or os.path.normpath(e.cwd) in folders)
            and (after is None or e.sort_key() > after)
        ]
        shown = entries[:size]
        return shown, encode_cursor(shown[-1]) if len(entries) > size else None

    def _files(self) -> list[tuple[str, os.stat_result]]:
        """(path, stat) of the conversation files: this version's first, then older ACP ones (the newer copy wins)."""
        files: list[tuple[str, os.stat_result]] = []
        for folder in (self.directory, self.directory / LEGACY_ACP_DIR):
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name.endswith(".json") and entry.is_file():
                            try:
                                files.append((entry.path, entry.stat()))
                            except OSError:
                                continue  # deleted meanwhile
            except OSError:
                continue
        return files

    def _read(self, path: str, stat: os.stat_result) -> Listed | None:
        """The listing of one file (from the cache while the file is unchanged)."""
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
            entry = summarize(record, Path(path).stem, stat.st_mtime) if isinstance(record, dict) else None
        except (OSError, ValueError) as exc:
            log.debug("session/list skips %s: %s", path, exc)
            entry = None
        self._cache[path] = (stamp, entry)
        return entry
