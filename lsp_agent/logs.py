"""One logging set-up for every command: stderr or a file, never stdout (a protocol channel for serve/acp)."""

from __future__ import annotations

import logging
import sys

HANDLER_NAME = "lsp-agent"
NOISY_LOGGERS = ("LiteLLM", "litellm", "httpx", "httpcore")


def setup_logging(level: str | None, log_file: str | None = None) -> None:
    """Log at `level` (default WARNING) to `log_file` or stderr; calling it again replaces the handler."""
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.set_name(HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(getattr(logging, (level or "WARNING").upper(), logging.WARNING))
    for noisy in NOISY_LOGGERS:  # litellm and its HTTP stack log every request at INFO
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))
