"""The open file's own outline beyond the prompt's window: its imports and the headers of its definitions.

The editor shows the whole file, the prompt only a window of it; the names the code at the cursor needs are often
defined in the same file out of that window (the class's other methods, a module's helpers and constants, the
imports at the top). They are read from the document's text as the editor has it, never from the index's copy,
and only outside the window, so a suggestion's own lines can never come back through them.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from lsp_agent.completion.prompt import Snippet
from lsp_agent.index.chunking import file_symbols

log = logging.getLogger(__name__)

OWN = "own"  # the Snippet kind of the open file's outline
IMPORT = re.compile(r"(?:import|from)\s")
COMMENT = re.compile(r"\s+#.*$")  # a comment after code (a `#` inside a string is rare in these lines)
BRACKET_SPACE = re.compile(r"([(\[])\s+")
TRAILING_COMMA = re.compile(r",\s*\)")
HEADER_LINES = 4  # a definition's header may wrap over this many lines
SHOWN_KINDS = frozenset({"function", "method", "class", "constant", "attribute"})


def own_outline(
    rel: str, lines: list[str], cursor_line: int, window: tuple[int, int], tree: Any = None
) -> list[Snippet]:
    """Snippets of the file outside its window (0-based first and last line), most useful first: the imports,
    the enclosing class's fields, the headers of its methods, then of the module's definitions (nearest to the
    cursor first). `tree`: the text's parse when the caller keeps one (parsing a long file costs most)."""
    outside = [i for i in range(len(lines)) if not window[0] <= i <= window[1]]
    out = [_imports(rel, lines, outside)] if outside else []
    try:
        symbols = file_symbols(rel, "\n".join(lines), references=False, tree=tree)
    except Exception as exc:  # noqa: BLE001 - an unparsable file has no outline, the completion goes on
        log.debug("outline of %s: %s", rel, exc)
        symbols = []
    defs = [s for s in symbols if s.role == "definition" and s.kind in SHOWN_KINDS]
    here = cursor_line + 1
    enclosing = [s for s in defs if s.kind == "class" and s.line <= here <= s.end_line]
    owner = max(enclosing, key=lambda s: s.line).qualified_name if enclosing else None

    def rank(symbol) -> tuple[int, int]:
        qualified = symbol.qualified_name or symbol.name
        member = (
            owner is not None and qualified.startswith(owner + ".") and "." not in qualified[len(owner) + 1 :]
        )
        top = "." not in qualified
        field = member and symbol.kind in ("attribute", "constant")
        return (0 if field else 1 if member else 2 if top else 3), abs(symbol.line - here)

    for symbol in sorted(defs, key=rank):
        first = symbol.line - 1
        if rank(symbol)[0] == 3 or window[0] <= first <= window[1]:
            continue  # nested deeper than a class's members, or shown by the window
        header = _header(lines, first, window)
        if header:
            out.append(Snippet(rel, header, OWN, (first + 1, first + header.count("\n") + 1)))
    return [s for s in out if s.text]


def _imports(rel: str, lines: list[str], outside: list[int]) -> Snippet:
    """The file's top-level import statements outside the window, each on one line (a bracketed one joined),
    without their comments."""
    kept: list[int] = []
    statements: list[str] = []
    depth = 0
    for i in outside:
        text = COMMENT.sub("", lines[i]).rstrip()
        if depth or IMPORT.match(text):
            kept.append(i)
            joined = depth > 0
            depth = max(0, depth + text.count("(") - text.count(")"))
            if joined:
                statements[-1] += " " + text.strip()
            else:
                statements.append(text)
    shown = "\n".join(TRAILING_COMMA.sub(")", BRACKET_SPACE.sub(r"\1", s)) for s in statements)
    return Snippet(rel, shown, OWN, (kept[0] + 1, kept[-1] + 1) if kept else (0, 0))


def _header(lines: list[str], first: int, window: tuple[int, int]) -> str:
    """A definition's header (up to the line that ends it) and an elided body; a one-line definition whole."""
    out: list[str] = []
    for i in range(first, min(len(lines), first + HEADER_LINES)):
        if window[0] <= i <= window[1]:
            break
        out.append(COMMENT.sub("", lines[i]).rstrip())
        if out[-1].endswith(":"):
            return "\n".join(out) + " ..."  # `def f(x): ...`: the body elided on the header's line
        if i == first and not lines[i].lstrip().startswith(("def ", "async def ", "class ", "@")):
            text = out[-1]  # a constant or attribute: its line, when it is the whole statement
            return text if text.count("(") + text.count("[") + text.count("{") == _closers(text) else ""
    return ""


def _closers(text: str) -> int:
    return text.count(")") + text.count("]") + text.count("}")
