"""Secret files: which workspace paths the agent may never read, search, index or write.

The built-in patterns cover the usual homes of credentials; the `secretFiles` setting adds gitignore-style
patterns (a `!pattern` makes a file readable again). Patterns without a slash match at any depth, as in
.gitignore, so `sub/.env` is as secret as `.env`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import PurePosixPath

import pathspec

from lsp_agent.workspace.paths import PathError

# Refused by default. The committed templates of .env files hold no values and tell the agent which
# variables a project reads, so they stay readable (list one in secretFiles to make it secret again).
DEFAULT_SECRET_FILES: tuple[str, ...] = (
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
    ".htpasswd",
)
SETTING = "secretFiles"


class SecretFileError(PathError):
    """A path the agent named is a secret file: refused, with a message the model can act on."""


class SecretFiles:
    """Matches workspace-relative POSIX paths against the default and configured secret patterns.

    The defaults name files (by their name, at any depth), never directories: a virtualenv called `.env` is not
    a secret. The configured patterns match like .gitignore lines, directories included, and decide first.
    """

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.extra = tuple(p for p in extra if isinstance(p, str) and p.strip())
        self.patterns = DEFAULT_SECRET_FILES + self.extra
        self._configured = pathspec.GitIgnoreSpec.from_lines(self.extra) if self.extra else None

    def is_secret(self, rel: str, is_dir: bool = False) -> bool:
        """True when the file (or directory) `rel`, POSIX and relative to the root, is secret."""
        rel = rel.strip("/")
        if not rel or rel == ".":
            return False
        if self._configured is not None:
            verdict = self._configured.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                return verdict
        if is_dir:
            return False
        name = rel.rsplit("/", 1)[-1]
        return _secret_name(name if name not in (".", "..") else PurePosixPath(rel).name)

    def check(self, *names: str, is_dir: bool = False) -> None:
        """Raise SecretFileError when any of `names` (the path as given, the resolved path) is secret."""
        for name in names:
            if name and self.is_secret(name, is_dir):
                raise SecretFileError(refusal(name.rstrip("/") + ("/" if is_dir else "")))

    def index_excludes(self) -> list[str]:
        """The configured patterns that hide files, for an exclude list (negations would re-include files)."""
        return [p for p in self.extra if not p.lstrip().startswith("!")]


_DEFAULT_SPEC = pathspec.GitIgnoreSpec.from_lines(DEFAULT_SECRET_FILES)


def _needle(pattern: str) -> str:
    """Text a name must contain (lowercased) to match a name pattern: its longest literal run ("" if unsure)."""
    if any(c in pattern for c in "?[\\/"):
        return ""
    return max(pattern.lower().split("*"), key=len)


# A name that contains no positive pattern's literal cannot be secret ("!" patterns only make names readable);
# the check costs a fraction of the pattern match most names would otherwise go through.
_NEEDLES = tuple(sorted({_needle(p) for p in DEFAULT_SECRET_FILES if not p.startswith("!")}))


@functools.lru_cache(maxsize=1 << 16)
def _secret_name(name: str) -> bool:
    """Whether a file of this name is secret by the default patterns (names repeat: a walk asks once each)."""
    lowered = name.lower()
    return any(n in lowered for n in _NEEDLES) and _DEFAULT_SPEC.match_file(name)


def refusal(rel: str) -> str:
    """The message a tool returns for a secret file."""
    return (
        f"refused: {rel} is a secret file ({SETTING}); its contents are never sent to the model and the agent "
        "does not read, search or write it. If the task needs a value from it, ask the user; to change it, "
        "tell the user what to change."
    )


def lexical_rel(text: str) -> str:
    """The path as the model wrote it, in POSIX form without `./` (for matching the name it used)."""
    return PurePosixPath(text.strip().replace("\\", "/")).as_posix().lstrip("/")


@functools.lru_cache(maxsize=32)
def secret_files(extra: tuple[str, ...] = ()) -> SecretFiles:
    """A shared matcher for the default patterns plus `extra`."""
    return SecretFiles(extra)


def secret_files_of(settings: object | None) -> SecretFiles:
    """The matcher for a Settings object (its secret_files), or the defaults."""
    return secret_files(tuple(getattr(settings, "secret_files", None) or ()))
