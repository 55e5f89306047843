"""Redaction: the values of API keys and other secrets become a visible marker in every observation.

The values come from the configured api_key, environment variables whose names look secret (…_KEY, …_TOKEN,
…SECRET…, …PASSWORD…, …) and the workspace's top-level .env files (but for lsp-agent's own settings there,
`LSP_AGENT_MODEL`, `LSP_AGENT_MODELS`, ..., whose names do not look secret). A value is hidden wherever it appears, and so
is a piece of it of FRAGMENT_CHARS or more at the start or end of a value (what a cut line or a truncated
output leaves of it).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsp_agent.workspace.secrets import secret_files

log = logging.getLogger(__name__)

MARKER = "[REDACTED:{name}]"
SETTINGS_PREFIX = "LSP_AGENT_"  # the environment variables of lsp-agent's settings
MIN_SECRET_CHARS = 8  # shorter values ("1", "true", "8080") are too common to hide
FRAGMENT_CHARS = 12  # a start or end piece this long is hidden too
# Words that make a variable name look secret, matched against the parts of the name split at "_".
SECRET_NAME_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE", "CREDENTIAL"}
    | {"CREDENTIALS", "AUTH", "PRIVATE", "SESSION", "COOKIE", "SIGNATURE", "DSN", "PAT"}
)
# Secret-looking names that hold paths or flags, not secrets.
NOT_SECRET_NAMES = frozenset(
    {"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO", "KRB5CCNAME"}
    | {"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "KEYTIMEOUT", "PASSWORD_STORE_DIR"}
)
COMMON_VALUES = frozenset(
    {"true", "false", "yes", "no", "none", "null", "enabled", "disabled", "localhost", "development"}
    | {"production", "staging", "default", "changeme", "undefined"}
)
_SECRET_NAME_RE = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)S?$")
_SEEN: dict[str, str] = {}  # every secret a redactor was built with: value -> name (logs.py hides them)


def looks_secret_name(name: str) -> bool:
    """True for variable names that usually hold credentials (OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD, ...)."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES:
        return False
    parts = [p for p in re.split(r"[^A-Z0-9]+", upper) if p]
    return any(p in SECRET_NAME_WORDS for p in parts) or bool(_SECRET_NAME_RE.search(upper))


def worth_hiding(value: str) -> bool:
    """True for values long and unusual enough to be a secret (never "1", "true" or a plain path)."""
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS or value.lower() in COMMON_VALUES or value.isdigit():
        return False
    return not (
        value.startswith(("/", "~")) and " " not in value and os.path.exists(os.path.expanduser(value))
    )


class Redactor:
    """Replaces known secret values (and their start and end pieces) in text with [REDACTED:NAME]."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        """`secrets` maps each value to hide to the name shown in its marker."""
        self._secrets = sorted(
            ((value.strip(), name) for value, name in secrets.items() if worth_hiding(value)),
            key=lambda item: -len(item[0]),
        )

    @property
    def names(self) -> list[str]:
        """The names of the hidden values (for logs and tests; never the values)."""
        return sorted({name for _, name in self._secrets})

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def redact(self, text: str) -> str:
        """`text` with every secret value and every long enough start or end piece of one replaced by a marker."""
        if not self._secrets or not text:
            return text
        spans: list[tuple[int, int, str]] = []
        for value, name in self._secrets:
            spans.extend((start, end, name) for start, end in _occurrences(text, value))
        if not spans:
            return text
        merged: list[list] = []
        for start, end, name in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end, name])
        out: list[str] = []
        pos = 0
        for start, end, name in merged:
            out.append(text[pos:start])
            out.append(MARKER.format(name=name))
            pos = end
        out.append(text[pos:])
        return "".join(out)


def _occurrences(text: str, value: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each occurrence of `value` and of its start or end pieces of FRAGMENT_CHARS or more."""
    piece = min(len(value), FRAGMENT_CHARS)
    head, tail = value[:piece], value[-piece:]
    start = text.find(head)
    while start != -1:
        end = start + piece
        while end < len(text) and end - start < len(value) and text[end] == value[end - start]:
            end += 1
        yield start, end
        start = text.find(head, start + 1)
    end = text.find(tail)
    while end != -1:
        stop = end + piece
        first = end
        offset = len(value) - piece  # index in value of the tail's first character
        while first > 0 and offset > 0 and text[first - 1] == value[offset - 1]:
            first -= 1
            offset -= 1
        yield first, stop
        end = text.find(tail, end + 1)


def collect_secrets(
    api_key: str | None,
    environ: Mapping[str, str],
    root: Path | None,
) -> dict[str, str]:
    """value -> name of everything to hide: the api_key setting, secret-looking variables, top-level .env values."""
    found: dict[str, str] = {}
    for path in _dotenv_files(root):
        for key, value in _dotenv_values(path).items():
            if key.startswith(SETTINGS_PREFIX) and not looks_secret_name(key):
                continue  # lsp-agent's own settings (LSP_AGENT_MODEL=openai/gpt-4o) are no secret; its key is
            if value and worth_hiding(value):
                found.setdefault(value.strip(), key)
    for key, value in environ.items():
        if value and looks_secret_name(key) and worth_hiding(value):
            found[value.strip()] = key  # the environment's name wins: it is the one a user recognises
    if api_key and worth_hiding(api_key):
        found.setdefault(api_key.strip(), "apiKey")
    return found


def _dotenv_files(root: Path | None) -> list[Path]:
    """The .env files at the top of the workspace that the default patterns call secret (.env, .env.local, ...).

    The secretFiles setting does not change this list: a user who makes .env readable still keeps its values
    from the model.
    """
    if root is None:
        return []
    try:
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if e.name.startswith(".env") and e.is_file())
    except OSError:
        return []
    defaults = secret_files()
    return [Path(root) / name for name in names if defaults.is_secret(name)]


def _dotenv_values(path: Path) -> dict[str, str]:
    """The variables of one .env file ({} when it cannot be parsed)."""
    from dotenv import dotenv_values

    try:
        return {k: v for k, v in dotenv_values(path).items() if v is not None}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.debug("cannot read %s for redaction: %s", path, exc)
        return {}


def redactor_for(settings: object | None, root: Path | None) -> Redactor:
    """The Redactor of a run: its settings' api_key, this process's environment and the workspace's .env files."""
    api_key = getattr(settings, "api_key", None)
    secrets = collect_secrets(api_key, dict(os.environ), root)
    _SEEN.update(secrets)
    return Redactor(secrets)


def seen_secrets() -> dict[str, str]:
    """value -> name of every secret the redactors of this process were built with (logs.py hides them too)."""
    return dict(_SEEN)
