"""Team index URLs: which store a setting names, and how to mention one without its password."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

SCHEMES = ("postgresql://", "postgres://")
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/@\s:]*):[^@\s]*@", re.IGNORECASE)
_KEYWORD = re.compile(r"\b(password|passfile|sslpassword)\s*=\s*('[^']*'|\S+)", re.IGNORECASE)


class TeamStoreError(RuntimeError):
    """The team index failed in a way the user can act on; the message never holds a password."""


def is_team_url(value: str | None) -> bool:
    """Whether a store setting names a PostgreSQL team index (else: the local SQLite index)."""
    return bool(value) and value.strip().lower().startswith(SCHEMES)  # type: ignore[union-attr]


def redact(text: str, url: str | None = None) -> str:
    """`text` with every URL password, `password=` keyword and the password of `url` replaced by ***."""
    text = _USERINFO.sub(r"\1:***@", str(text))
    text = _KEYWORD.sub(r"\1=***", text)
    secret = _password(url) if url else None
    if secret and len(secret) >= 3:
        text = text.replace(secret, "***")
    return text


def _password(url: str) -> str | None:
    """The password a URL carries in its user info or its query string, if any."""
    try:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        return parts.password or query.get("password")
    except ValueError:
        return None


def describe(url: str) -> str:
    """`user@host:port/db` of a URL, for messages (no password, no options)."""
    try:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        host = parts.hostname or query.get("host") or "localhost"
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
        return f"{user}{host}{port}{parts.path or '/'}"
    except ValueError:
        return "the configured team index"
