"""What keeps secrets out of completion prompts: the secret-file rules and each folder's redaction, built once, and
the monitor's view of the workspace with secret files left out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_agent.completion.context import line_reader
from lsp_agent.completion.members import Workspace
from lsp_agent.config import Settings
from lsp_agent.workspace.redaction import redactor_for
from lsp_agent.workspace.secrets import SecretFiles


class PromptPrivacy:
    """The secret-file rules of the current settings and the redaction of a folder's secrets, kept while valid."""

    def __init__(self) -> None:
        self._secret_rules: tuple[Settings, SecretFiles] | None = None
        self._redactors: dict[tuple, Callable[[str], str]] = {}

    def secrets(self, settings: Settings) -> SecretFiles:
        """The secret-file rules of these settings (built once per settings)."""
        if self._secret_rules is None or self._secret_rules[0] is not settings:
            self._secret_rules = (settings, SecretFiles(settings.secret_files))
        return self._secret_rules[1]

    def workspace(self, settings: Settings, db_path: Any, root: Path, buffers: dict[str, str]) -> Workspace:
        """What the monitor reads member sets from (the index's files, open buffers, the disk), every read under
        the secret-file rules: a secret file's names, members and existence never reach a grammar."""
        is_secret = self.secrets(settings).is_secret
        return Workspace(db_path, line_reader(root, buffers, is_secret), root.name, is_secret)

    def redactor(self, settings: Settings, root: Path | None) -> Callable[[str], str]:
        """The redaction of a folder's secrets, collected again when the settings, the folder's entries or its .env
        change (collecting reads the .env files)."""
        key = (id(settings), root, *(_mtime(p) for p in ((root, root / ".env") if root else ())))
        if key not in self._redactors:
            self._redactors = {key: redactor_for(settings, root).redact}
        return self._redactors[key]


def _mtime(path: Path) -> int:
    """A file's modification time in ns (0 when it does not exist)."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
