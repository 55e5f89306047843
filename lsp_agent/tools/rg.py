"""Optional ripgrep prefilter for search_text: rg only narrows which files Python reads, never the results.

rg is used for literal patterns only (Rust and Python regex dialects differ) and only when it is on PATH or beside
this interpreter (the `ripgrep` wheel puts it in the venv's bin/, which is not on PATH unless activated). Every
file it does not list is one that cannot contain the literal, so the Python search that follows produces exactly
the output it would produce alone. Any rg failure falls back to searching every file in Python.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

MIN_FILES = 100  # below this, starting a process costs more than it saves
CHUNK = 4000  # files per rg invocation (keeps the command line far below ARG_MAX)
TIMEOUT = 30.0
ENABLED = True  # switch for benchmarks and tests comparing both paths


def rg_binary() -> str | None:
    """The rg executable on PATH or beside this interpreter, or None (also when disabled)."""
    return _find_rg() if ENABLED else None


@functools.cache
def _find_rg() -> str | None:
    """Where rg is: PATH first, then the bin/ of the interpreter's environment."""
    return shutil.which("rg") or shutil.which("rg", path=str(Path(sys.executable).parent))


def literal_candidates(
    root: Path, files: list[str], literal: str, *, case_sensitive: bool
) -> set[str] | None:
    """The subset of `files` (relative to root) whose bytes may contain `literal`; None when rg cannot be used."""
    rg = rg_binary()
    if rg is None or len(files) < MIN_FILES or not literal or "\n" in literal or "\r" in literal:
        return None
    if not case_sensitive and not _same_case_folding(literal):
        return None
    base = [
        rg,
        "--no-config",
        "--files-with-matches",
        "--null",
        "--no-ignore",
        "--hidden",
        "--text",
        "--no-messages",
        "--encoding",
        "none",
        "--fixed-strings",
        "--case-sensitive" if case_sensitive else "--ignore-case",
        "--regexp",
        literal,
        "--",
    ]
    found: set[str] = set()
    for start in range(0, len(files), CHUNK):
        try:
            proc = subprocess.run(
                base + files[start : start + CHUNK],
                cwd=root,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("rg prefilter unavailable: %s", exc)
            return None
        if proc.returncode not in (0, 1):  # 2: an error somewhere; do not trust a partial answer
            log.debug("rg prefilter failed (%s): %s", proc.returncode, proc.stderr[:200])
            return None
        found.update(p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p)
    return {f.removeprefix("./") for f in found}


def _same_case_folding(literal: str) -> bool:
    """True when rg --ignore-case matches every string Python's re.IGNORECASE does for this literal.

    Measured: they agree on ASCII letters except i/I, which Python also matches to U+0130 and U+0131 and rg does
    not; non-ASCII folding is not checked, so such literals are searched in Python only.
    """
    return literal.isascii() and "i" not in literal.lower()
