"""Editor diagnostics as ask context: validated from the client's payload, rendered for the model.

The clients collect the current file's diagnostics from every language server the editor runs
(vim.diagnostic.get, vscode.languages.getDiagnostics) and send them with the ask; "fix this diagnostic" sends the
diagnostic to fix (its range) and its neighbours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

MAX_DIAGNOSTICS = 200  # accepted per ask
SHOWN = 60  # rendered for the model
MESSAGE_CHARS = 400
NEIGHBOUR_LINES = 20  # "fix this diagnostic": the others within this many lines come along
SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def parse_diagnostics(value: Any, field: str = "diagnostics") -> list[dict[str, Any]]:
    """Validate the `diagnostics` of an ask: a list of {range, message, severity?, source?, code?, uri?}."""
    if not isinstance(value, list):
        raise ValueError(f"lspAgent.ask: '{field}' must be a list of LSP diagnostics")
    if len(value) > MAX_DIAGNOSTICS:
        value = value[:MAX_DIAGNOSTICS]
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("message"), str) or not _line_of(item):
            raise ValueError(
                f"lspAgent.ask: '{field}[{i}]' must be an LSP diagnostic "
                "{range: {start: {line, character}, end}, message, severity?, source?, code?}"
            )
        out.append(item)
    return out


def render_diagnostics(
    diagnostics: list[dict[str, Any]], root: Path, current_file: str | None, focus_line: int | None = None
) -> tuple[str, int]:
    """(text, count) of the diagnostics, by file and line; with focus_line only those near it (0-based)."""
    chosen = diagnostics
    if focus_line is not None:
        chosen = [d for d in diagnostics if abs((_line_of(d) or (0,))[0] - focus_line) <= NEIGHBOUR_LINES]
    chosen = sorted(chosen, key=lambda d: (_file_of(d, root, current_file), _line_of(d) or (0,)))
    lines = []
    sources = sorted({str(d["source"]) for d in chosen if d.get("source")})
    for d in chosen[:SHOWN]:
        line = (_line_of(d) or (0,))[0] + 1
        severity = SEVERITIES.get(d.get("severity"), str(d.get("severity") or "problem"))
        source = f" [{d['source']}]" if d.get("source") else ""
        code = f" ({d['code']})" if isinstance(d.get("code"), (str, int)) and d.get("code") != "" else ""
        message = " ".join(str(d["message"]).split())[:MESSAGE_CHARS]
        lines.append(f"{_file_of(d, root, current_file)}:{line}: {severity}{source}{code}: {message}")
    if len(chosen) > SHOWN:
        lines.append(f"... and {len(chosen) - SHOWN} more")
    where = f" (from {', '.join(sources)})" if sources else ""
    head = "Diagnostics near the one to fix" if focus_line is not None else "Diagnostics of the current file"
    return f"{head}{where}:\n" + "\n".join(lines), len(chosen)


def _line_of(d: dict[str, Any]) -> tuple[int, int] | None:
    """(line, character) of a diagnostic's start, or None when its range is malformed."""
    try:
        start = d["range"]["start"]
        line, char = start["line"], start["character"]
    except (KeyError, TypeError):
        return None
    if isinstance(line, bool) or not isinstance(line, int) or not isinstance(char, int) or line < 0:
        return None
    return line, char


def _file_of(d: dict[str, Any], root: Path, current_file: str | None) -> str:
    """The workspace-relative file of a diagnostic (its uri), else the current file."""
    uri = d.get("uri")
    if isinstance(uri, str) and uri.startswith("file:"):
        path = Path(unquote(urlparse(uri).path))
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            return path.as_posix()
    return current_file or "current file"
