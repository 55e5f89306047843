"""Which repository and commit a tree is published under, and which snapshot a laptop's tree starts from."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lsp_agent.index.rows import text_hash


def repo_and_head(root: Path) -> tuple[str, str | None]:
    """(repository, HEAD commit or None): the origin URL without credentials (else the folder name) and HEAD."""
    origin = _git(root, "config", "--get", "remote.origin.url")
    top = _git(root, "rev-parse", "--show-toplevel")
    repo = _strip_credentials(origin) if origin else Path(top or root).name
    return repo, _git(root, "rev-parse", "HEAD") or None


def tree_identity(root: Path, keys: dict[str, str]) -> tuple[str, str]:
    """(repository, commit) a tree is published under.

    A clean git checkout: its origin URL without credentials (else the folder name) and HEAD. A non-git tree:
    `tree-` and a hash over every file's path and content (so identical trees share one snapshot); a git tree
    with uncommitted changes: HEAD, `-dirty-` and that hash.
    """
    content = text_hash("\n".join(f"{p}\0{k}" for p, k in sorted(keys.items())))
    repo, head = repo_and_head(root)
    if not head:
        return repo, f"tree-{content}"
    dirty = _git(root, "status", "--porcelain", "--untracked-files=normal")
    return repo, f"{head}-dirty-{content[:12]}" if dirty else head


def _strip_credentials(url: str) -> str:
    """A remote URL without user info (a token in `https://x:TOKEN@host/...` must not become a repo name)."""
    if "://" in url and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://{rest.split('@', 1)[1]}"
    return url


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
