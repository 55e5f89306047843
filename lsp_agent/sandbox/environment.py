"""The child's environment: the parent's minus anything that looks like a secret, with HOME in the sandbox."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

SECRET_PATTERNS = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "*SECRET_KEY*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "LSP_AGENT_API_KEY",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)


def is_secret_name(name: str) -> bool:
    """True for variable names that commonly hold credentials (matched case-insensitively)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def scrubbed_environment(
    parent: Mapping[str, str], *, home: str, tmpdir: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A copy of `parent` without secrets, HOME and TMPDIR pointed into the sandbox."""
    env = {k: v for k, v in parent.items() if not is_secret_name(k)}
    env.update(
        HOME=home,
        TMPDIR=tmpdir,
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        PIP_NO_INPUT="1",
        GIT_TERMINAL_PROMPT="0",
    )
    env.pop("PYTHONSTARTUP", None)
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_CACHE_HOME", None)
    if extra:
        env.update(extra)
    return env
