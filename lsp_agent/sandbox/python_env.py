"""Which Python the sandbox runs code and tests with: a configured one, the workspace's venv, or the server's."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

VENV_DIRS = (".venv", "venv")


@dataclass(frozen=True)
class PythonChoice:
    """An interpreter for the sandbox and why it was chosen."""

    executable: str
    source: str  # "setting" | "workspace" | "server" | "container"
    venv: Path | None = None  # the virtual environment it belongs to (its bin/ goes first on PATH)
    note: str = ""  # why a configured interpreter was not used

    @property
    def version(self) -> str | None:
        """The venv's Python version from its pyvenv.cfg (the interpreter itself is never run outside the sandbox)."""
        if self.venv is None:
            return sys.version.split()[0] if self.source == "server" else None
        try:
            lines = (self.venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        for line in lines:
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info") and value.strip():
                return value.strip()
        return None

    def describe(self) -> str:
        """One line for the tool's result: which interpreter ran."""
        why = {
            "setting": "the python setting",
            "workspace": f"the workspace's {self.venv.name}/" if self.venv else "the workspace",
            "server": "the language server's own; no .venv/ or venv/ with bin/python in the workspace",
            "container": "the container image's",
        }[self.source]
        version = self.version
        line = f"python: {self.executable} ({why}{f'; Python {version}' if version else ''})"
        return line + (f"; NOTE: {self.note}" if self.note else "")

    def needed_paths(self) -> list[Path]:
        """Directories the interpreter needs to run (kept visible when the sandbox hides the home directory)."""
        if self.source in ("server", "container"):
            return []
        exe = Path(self.executable)
        paths = [self.venv] if self.venv is not None else [exe.parent.parent]
        try:
            paths.append(exe.resolve().parent.parent)  # a venv's python links to its base installation
        except (OSError, RuntimeError):
            pass
        return paths


def choose_python(root: Path, configured: str | None = None) -> PythonChoice:
    """The configured interpreter when it exists, else the workspace's .venv/ or venv/, else this process's."""
    root = Path(root)
    note = ""
    if configured:
        found = _configured(root, configured)
        if found is not None:
            return PythonChoice(str(found), "setting", _venv_of(found))
        note = (
            f"the python setting {configured!r} is not an executable file (checked relative to the workspace "
            "and on PATH); fix lspAgent.python or LSP_AGENT_PYTHON"
        )
    for name in VENV_DIRS:
        candidate = root / name / "bin" / "python"
        if _executable(candidate):
            return PythonChoice(str(candidate), "workspace", root / name, note)
    return PythonChoice(sys.executable, "server", None, note)


def _configured(root: Path, value: str) -> Path | None:
    """The configured interpreter: a path (~ expanded, relative to the workspace) or a command on PATH."""
    text = os.path.expanduser(value.strip())
    if os.sep in text or text.startswith("."):
        path = Path(text) if os.path.isabs(text) else root / text
        if path.is_dir():  # a venv directory given instead of its interpreter
            path = path / "bin" / "python"
        return path if _executable(path) else None
    found = shutil.which(text)
    return Path(found) if found else None


def _executable(path: Path) -> bool:
    """True for an executable regular file (following symlinks)."""
    return path.is_file() and os.access(path, os.X_OK)


def _venv_of(executable: Path) -> Path | None:
    """The virtual environment holding `executable` (bin/python next to a pyvenv.cfg), if any."""
    venv = executable.parent.parent
    return venv if (venv / "pyvenv.cfg").is_file() else None
