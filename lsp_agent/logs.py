"""One logging set-up for every command: stderr or a file, never stdout (a protocol channel for serve/acp), with
secrets hidden at every level (DEBUG logs the model requests: the user's prompt, and openai's client its options).

What is hidden, in the whole formatted line (message, arguments and traceback): the values lsp-agent's secret
redaction knows (workspace/redaction.py: secret-looking environment variables, and the API keys and workspace
`.env` values of every run, session or completion set up in this process) and credential shapes whatever their
source (`Bearer ...`, `api_key=...`, `"password": "..."`, `sk-...`, `ghp_...`, `AKIA...`).
"""

from __future__ import annotations

import logging
import os
import re
import sys

from lsp_agent.workspace.redaction import Redactor, collect_secrets, seen_secrets

HANDLER_NAME = "lsp-agent"
NOISY_LOGGERS = ("LiteLLM", "litellm", "httpx", "httpcore")
HIDDEN = "[REDACTED]"
# (pattern, replacement): credentials recognised by their shape, for values no setting or variable names
CREDENTIAL_SHAPES = (
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{HIDDEN}"),
    (re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+)[A-Za-z0-9+/=]{4,}"), rf"\1{HIDDEN}"),
    (
        re.compile(
            r"(?i)(\b(?:api[_-]?key|x-api-key|authorization|password|passwd|secret|client[_-]?secret|"
            r"access[_-]?token|refresh[_-]?token|auth[_-]?token|token)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!bearer\s|basic\s|\[REDACTED)([^\s\"',}&]{8,})"
        ),
        rf"\1{HIDDEN}",
    ),
    (
        re.compile(
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
            r"|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})"
        ),
        HIDDEN,
    ),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)[^\s/@]{3,}@"), rf"\1{HIDDEN}@"),  # passwords in URLs
)


class RedactingFormatter(logging.Formatter):
    """A formatter whose every line has the known secret values and credential shapes replaced by markers."""

    def __init__(self, fmt: str) -> None:
        super().__init__(fmt)
        self._known: tuple[int, int] | None = None
        self._redactor = Redactor({})

    def format(self, record: logging.LogRecord) -> str:
        """The record as the plain formatter writes it, secrets hidden."""
        return self.redact(super().format(record))

    def redact(self, text: str) -> str:
        """`text` with the known secret values, then credential shapes, hidden."""
        text = self._current().redact(text)
        for pattern, replacement in CREDENTIAL_SHAPES:
            text = pattern.sub(replacement, text)
        return text

    def _current(self) -> Redactor:
        """The redactor of what is known now (rebuilt when the environment or the known secrets changed)."""
        known = seen_secrets()
        key = (hash(frozenset(os.environ.items())), hash(frozenset(known.items())))
        if key != self._known:
            self._redactor = Redactor({**known, **collect_secrets(None, os.environ, None)})
            self._known = key
        return self._redactor


def setup_logging(level: str | None, log_file: str | None = None) -> None:
    """Log at `level` (default WARNING) to `log_file` or stderr, secrets hidden; calling it again replaces the
    handler."""
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.set_name(HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(getattr(logging, (level or "WARNING").upper(), logging.WARNING))
    for noisy in NOISY_LOGGERS:  # litellm and its HTTP stack log every request at INFO
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))
