"""ACP `authenticate`: an API key the user gives once, kept beside the permission rules, never logged.

The agent offers one auth method of type `env_var`: the client asks the user for `LSP_AGENT_API_KEY` (a password
field), starts the agent with it in the environment and calls `authenticate("api-key")`. The agent then keeps the
key in `<config>/lsp-agent/permissions/api-key` (the permission store's directory, mode 0600), so later starts
need not be given it again; a run uses it when no `apiKey` setting (flag, environment, `.env`) names one.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from acp.schema import AuthEnvVar, EnvVarAuthMethod

log = logging.getLogger(__name__)

METHOD_ID = "api-key"
KEY_VARIABLE = "LSP_AGENT_API_KEY"
KEY_FILE = "api-key"


def auth_methods() -> list[EnvVarAuthMethod]:
    """The auth methods this agent offers in its initialize answer."""
    return [
        EnvVarAuthMethod(
            id=METHOD_ID,
            name="API key",
            description="The API key of your model provider, given once: lsp-agent keeps it (private to your "
            "user) beside its permission rules and uses it when no apiKey setting names one",
            type="env_var",
            vars=[AuthEnvVar(name=KEY_VARIABLE, label="Model provider API key", secret=True)],
        )
    ]


def key_path(directory: Path | None = None) -> Path:
    """Where the key is kept: the permission store's directory."""
    if directory is None:
        from lsp_agent.agent.permission_store import default_directory

        directory = default_directory()
    return directory / KEY_FILE


def stored_key(directory: Path | None = None) -> str | None:
    """The key given earlier, or None."""
    try:
        return key_path(directory).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def store_key(key: str, directory: Path | None = None) -> Path:
    """Keep the key, readable by this user only (written atomically); OSError when the disk refuses."""
    path = key_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(key + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def authenticate(
    method_id: str, environ: dict[str, str] | None = None, directory: Path | None = None
) -> None:
    """Take the key the client put in the environment and keep it; ValueError saying what is missing."""
    if method_id != METHOD_ID:
        raise ValueError(f"unknown auth method {method_id!r}; this agent offers {METHOD_ID!r}")
    key = ((environ if environ is not None else os.environ).get(KEY_VARIABLE) or "").strip()
    if not key:
        if stored_key(directory):
            return  # given at an earlier start
        raise ValueError(
            f"no API key: the client should ask for {KEY_VARIABLE} and start lsp-agent with it in the environment"
        )
    path = store_key(key, directory)
    log.info("the API key was stored in %s (mode 0600)", path)
