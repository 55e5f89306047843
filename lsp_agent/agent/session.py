"""Session memory: short summaries of earlier exchanges that a follow-up task sees, and its permission answers."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import deque
from pathlib import Path

from lsp_agent.agent.permissions import SessionPermissions

MAX_EXCHANGES = 20


class Session:
    """The last 20 exchange summaries of one conversation with the agent."""

    def __init__(self, id: str | None = None, exchanges: list[str] | None = None) -> None:  # noqa: A002
        self.id = id or uuid.uuid4().hex[:12]
        self.exchanges: deque[str] = deque(exchanges or [], maxlen=MAX_EXCHANGES)
        self.permissions = (
            SessionPermissions()
        )  # "reject once" and session grants: kept while the session lives

    def record(self, text: str) -> None:
        """Remember one exchange (e.g. "user applied the proposal of run X")."""
        text = " ".join(text.split())
        if text:
            self.exchanges.append(text[:1000])

    def context_text(self) -> str:
        """The earlier exchanges as prompt text, or "" when there are none."""
        if not self.exchanges:
            return ""
        lines = [f"{i}. {e}" for i, e in enumerate(self.exchanges, 1)]
        return "Earlier in this session (oldest first):\n" + "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"id": self.id, "exchanges": list(self.exchanges), "saved": time.time()}

    @classmethod
    def from_dict(cls, data: dict) -> Session:
        """Inverse of to_dict; bad entries are dropped."""
        exchanges = [e for e in data.get("exchanges", []) if isinstance(e, str)]
        return cls(str(data.get("id") or "") or None, exchanges)

    def save(self, directory: Path) -> Path:
        """Write the session to `<directory>/<id>.json`."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{_safe_name(self.id)}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, directory: Path, id: str) -> Session:  # noqa: A002
        """The saved session `id`, or a new empty one with that id when none (or a damaged one) exists."""
        path = directory / f"{_safe_name(id)}.json"
        try:
            session = cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, AttributeError):
            return cls(id)
        session.id = id
        return session


def sessions_dir() -> Path:
    """Where CLI sessions are persisted (the user cache dir)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("lsp-agent")) / "sessions"


def _safe_name(id: str) -> str:  # noqa: A002
    """A file-name-safe form of a session id."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", id)[:100] or "default"
