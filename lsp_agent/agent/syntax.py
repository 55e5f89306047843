"""Syntax checks of the Python files in a run's proposal."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_agent.workspace.overlay import Overlay


def python_syntax_errors(overlay: Overlay) -> list[str]:
    """`path:line:col: message` for each created or modified Python file that does not parse."""
    problems: list[str] = []
    for path in overlay.changed_paths():
        if not path.endswith((".py", ".pyi")) or not overlay.exists(path):
            continue
        try:
            text = overlay.read_text(path)
        except Exception:  # noqa: BLE001 - unreadable files are not ours to judge
            continue
        error = syntax_error(text, path)
        if error:
            problems.append(error)
    return problems


def syntax_error(text: str, path: str = "<string>") -> str | None:
    """The first syntax error of a Python source text, or None."""
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno or 0}:{exc.offset or 0}: {exc.msg}"
    except ValueError as exc:  # e.g. NUL bytes
        return f"{path}: {exc}"
    return None
