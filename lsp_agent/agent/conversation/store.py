"""The one store of conversations for every front-end: the editor server, `lsp-agent ask` and ACP sessions.

One JSON file per conversation, `<cache>/lsp-agent/sessions/<id>.json`, outside every workspace (so neither the
index nor the agent's tools see it; a `.gitignore` of `*` keeps the walks out should a cache dir lie inside a
workspace), written atomically and private to the user, with the run's secret values redacted:

    {"format": "lsp-agent-conversation", "version": 1, "id": "...", "root": "/path/of/the/folder",
     "frontEnd": "lsp" | "cli" | "acp", "saved": 1700000000.0,
     "exchanges": [...], "notes": [...], "summary": {...} | null,     <- Session.to_dict()
     "acp": {"mode": "code", "history": [...]}}                        <- what a front-end adds (optional)

Each workspace folder's current conversation (the one its newest ask belonged to, or the one "new conversation"
started) is named by `last-<folder>-<hash>.txt`, so a restarted editor, `ask --continue` and `lsp-agent
conversation` all continue the same one. Files of older versions (the ACP store's `{"memory": ..., "cwd": ...}`
under `sessions/acp/`) are read as well. A damaged file is moved aside (`<id>.json.damaged`) with a warning and
the conversation starts empty.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.agent.conversation.session import Session

log = logging.getLogger(__name__)

FORMAT = "lsp-agent-conversation"
VERSION = 1
LEGACY_ACP_DIR = "acp"  # where the ACP front-end kept its sessions before the stores were one


@dataclass
class StoredConversation:
    """A conversation read back: the session, the folder it belongs to and what its front-end added."""

    session: Session
    root: Path | None = None
    front_end: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"acp": {"mode": ..., "history": [...]}}


class ConversationStore:
    """Conversations as JSON files in one directory, and each workspace folder's current one."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_of(self, session_id: str) -> Path:
        """The file of a conversation."""
        return self.directory / f"{safe_name(session_id)}.json"

    def save(
        self,
        session: Session,
        *,
        root: Path | None,
        front_end: str,
        extra: dict[str, Any] | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> Path:
        """Write a conversation atomically (secret values redacted); OSError when the disk refuses."""
        record = {
            "format": FORMAT,
            "version": VERSION,
            **session.to_dict(),
            "root": str(root) if root is not None else None,
            "frontEnd": front_end,
            **(extra or {}),
        }
        if redact is not None:
            record = redact_json(record, redact)
        path = self.path_of(session.id)
        write_atomically(path, json.dumps(record, ensure_ascii=False, indent=1))
        self._ignore_everything()
        return path

    def _ignore_everything(self) -> None:
        """A `.gitignore` of `*` in the store: should the cache dir lie inside a workspace, no walk indexes it."""
        marker = self.directory / ".gitignore"
        if not marker.exists():
            marker.write_text("# lsp-agent conversations: never indexed or searched\n*\n", encoding="utf-8")

    def load(self, session_id: str) -> StoredConversation | None:
        """The stored conversation `session_id`; None when there is none or it is damaged (logged, moved aside)."""
        path = self.path_of(session_id)
        if not path.exists():
            legacy = self.directory / LEGACY_ACP_DIR / path.name
            if not legacy.exists():
                return None
            path = legacy
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("the file holds no JSON object")
            stored = _from_record(data)
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            aside = _move_aside(path)
            log.warning(
                "conversation store %s is unreadable (%s): starting conversation %s empty%s",
                path,
                exc,
                session_id,
                f"; the damaged file was kept as {aside}" if aside else "",
            )
            return None
        stored.session.id = session_id
        return stored

    def delete(self, session_id: str) -> bool:
        """Remove a stored conversation (and its pre-version-1 ACP copy); False when there was none."""
        found = False
        for path in (
            self.path_of(session_id),
            self.directory / LEGACY_ACP_DIR / self.path_of(session_id).name,
        ):
            try:
                path.unlink()
                found = True
            except FileNotFoundError:
                pass
        return found

    # ----- the current conversation of a workspace folder -------------------------------------------------------

    def current_file(self, root: Path) -> Path:
        """Where the id of a folder's current conversation is kept (the editor's and the CLI's path agree)."""
        root = root.resolve()
        digest = hashlib.sha1(str(root).encode(), usedforsecurity=False).hexdigest()[:12]
        return self.directory / f"last-{safe_name(root.name)[:40]}-{digest}.txt"

    def current_id(self, root: Path) -> str | None:
        """The id of the folder's current conversation, or None."""
        try:
            return self.current_file(root).read_text(encoding="utf-8").strip() or None
        except (OSError, UnicodeDecodeError):
            return None

    def set_current(self, root: Path, session_id: str) -> None:
        """Make a conversation the folder's current one; OSError when the disk refuses."""
        write_atomically(self.current_file(root), session_id + "\n")


def default_store() -> ConversationStore:
    """The store of this user: `$XDG_CACHE_HOME/lsp-agent/sessions`."""
    from lsp_agent.agent.conversation.session import sessions_dir

    return ConversationStore(sessions_dir())


def _from_record(data: dict[str, Any]) -> StoredConversation:
    """A stored record (this version, or an older ACP or CLI one) as a StoredConversation."""
    if isinstance(data.get("memory"), dict):  # the ACP store before version 1
        session = Session.from_dict(data["memory"])
        extra = {"acp": {"mode": data.get("mode"), "history": data.get("history") or []}}
        return StoredConversation(session, _path(data.get("cwd")), "acp", extra)
    version = data.get("version", 0)
    if isinstance(version, int) and version > VERSION:
        raise ValueError(f"written by a newer lsp-agent (format version {version}); upgrade to read it")
    session = Session.from_dict(data)
    known = {"format", "version", "id", "exchanges", "notes", "summary", "saved", "root", "frontEnd"}
    extra = {k: v for k, v in data.items() if k not in known}
    return StoredConversation(session, _path(data.get("root")), str(data.get("frontEnd") or ""), extra)


def _path(value: Any) -> Path | None:
    """A stored path, or None."""
    return Path(value) if isinstance(value, str) and value else None


def redact_json(value: Any, redact: Callable[[str], str]) -> Any:
    """Every string in a JSON-ready value passed through `redact`."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_json(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v, redact) for v in value]
    return value


def write_atomically(path: Path, text: str) -> None:
    """Write a file so a reader sees the old or the new text, never half of it (private to this user)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _move_aside(path: Path) -> Path | None:
    """Rename a damaged file so the next save does not overwrite it; its new path, or None."""
    aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
    try:
        path.replace(aside)
    except OSError:
        return None
    return aside


def safe_name(session_id: str) -> str:
    """A file-name-safe form of a conversation id."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)[:100] or "default"
