"""ACP `authenticate`: an API key the user gives once, kept beside the permission rules, never logged.

The agent offers one auth method of type `env_var`: the client asks the user for `LSP_AGENT_API_KEY` (a password
field), starts the agent with it in the environment and calls `authenticate("api-key")`. The agent then keeps the
key in `<config>/lsp-agent/permissions/api-key` (the permission store's directory, mode 0600), so later starts
need not be given it again; a run uses it when no `apiKey` setting (flag, environment, `.env`) names one.

To a client that runs terminal logins (`clientCapabilities.auth.terminal`) it also offers `api-key-terminal`:
the client runs `lsp-agent acp --login` in a terminal, which asks for the key (not echoed) and keeps it the same way.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from acp.schema import AuthEnvVar, EnvVarAuthMethod, TerminalAuthMethod

log = logging.getLogger(__name__)

METHOD_ID = "api-key"
TERMINAL_METHOD_ID = "api-key-terminal"
LOGIN_FLAG = "--login"
KEY_VARIABLE = "LSP_AGENT_API_KEY"
KEY_FILE = "api-key"


def auth_methods(terminal: bool = False) -> list[EnvVarAuthMethod | TerminalAuthMethod]:
    """The auth methods this agent offers in its initialize answer (a terminal login to a client that runs one)."""
    methods: list[EnvVarAuthMethod | TerminalAuthMethod] = [
        EnvVarAuthMethod(
            id=METHOD_ID,
            name="API key",
            description="The API key of your model provider, given once: lsp-agent keeps it (private to your "
            "user) beside its permission rules and uses it when no apiKey setting names one",
            type="env_var",
            vars=[AuthEnvVar(name=KEY_VARIABLE, label="Model provider API key", secret=True)],
        )
    ]
    if terminal:
        methods.append(
            TerminalAuthMethod(
                id=TERMINAL_METHOD_ID,
                name="API key (terminal)",
                description="Type the API key of your model provider in a terminal once (it is not shown)",
                type="terminal",
                args=[LOGIN_FLAG],
            )
        )
    return methods


def key_path(directory: Path | None = None) -> Path:
    """Where the key is kept: the permission store's directory."""
    if directory is None:
        from lsp_agent.agent.consent.store import default_directory

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
    if method_id == TERMINAL_METHOD_ID:
        if stored_key(directory):
            return
        raise ValueError(f"no API key yet: run `lsp-agent acp {LOGIN_FLAG}` in a terminal and type it there")
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


def login(directory: Path | None = None) -> int:
    """`lsp-agent acp --login`: ask for the key on the terminal (not echoed) and keep it; the exit status."""
    import getpass
    import sys

    try:
        key = getpass.getpass("API key of your model provider (not shown): ").strip()
    except (EOFError, KeyboardInterrupt):
        key = ""
    if not key:
        print("lsp-agent: no key given; nothing was stored", file=sys.stderr)
        return 1
    path = store_key(key, directory)
    print(
        f"lsp-agent: the key is kept in {path} (readable by you only); ACP sessions use it", file=sys.stderr
    )
    return 0
