"""The syntax check before finishing, for every language the index parses: the parse errors a change introduced.

Python files are compiled (CPython's own message); the other languages with a tree-sitter grammar here (and Python
files whose base did not compile either) are parsed with it, and each ERROR or MISSING node of the new text that the
base text does not have too (same kind on a line of the same text) is a problem. Errors already in the file before
the run are never the run's to fix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import tree_sitter as ts

from lsp_agent.index.languages import language_for_path, parser_for
from lsp_agent.workspace.proposal import PYTHON_SUFFIXES, FileChange, python_syntax_error

MAX_CHECKED_CHARS = 2_000_000  # larger files are not parsed for the check
MAX_PROBLEMS = 3  # per file, in the report


def syntax_errors(changes: list[FileChange]) -> list[str]:
    """'path:line: message' for each parse error the changes introduced (at most MAX_PROBLEMS per file)."""
    problems: list[str] = []
    for change in changes:
        if change.new_text is not None:
            problems.extend(introduced_errors(change.path, change.base_text, change.new_text))
    return problems


def introduced_errors(path: str, base: str | None, new: str) -> list[str]:
    """The parse errors of `new` that `base` (None: a new file) does not have."""
    if path.endswith(PYTHON_SUFFIXES) and (base is None or python_syntax_error(path, base) is None):
        error = python_syntax_error(path, new)
        return [error] if error else []
    if len(new) > MAX_CHECKED_CHARS:
        return []
    language = language_for_path(path, new)
    parser = parser_for(language) if language else None
    if parser is None:
        return []
    old_lines, new_lines = (base or "").splitlines(), new.splitlines()
    before = Counter(_signature(p, old_lines) for p in _problems(parser, base)) if base else Counter()
    found: list[str] = []
    for node in _problems(parser, new):
        key = _signature(node, new_lines)
        if before[key] > 0:
            before[key] -= 1  # the same problem was there before the change
            continue
        found.append(f"{path}:{node.start_point[0] + 1}: {_describe(node, new)} ({language} parser)")
    return found[:MAX_PROBLEMS]


def _problems(parser: ts.Parser, text: str) -> Iterator[ts.Node]:
    """The ERROR and MISSING nodes of `text`'s tree, outermost first (an ERROR node's inside is not searched)."""
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            yield node
            continue
        if node.has_error:
            stack.extend(reversed(node.children))


def _signature(node: ts.Node, lines: list[str]) -> tuple[str, str, str]:
    """What identifies a problem across edits: its kind, its node type and the stripped text of its line."""
    row = node.start_point[0]
    line = lines[row] if row < len(lines) else ""
    return ("missing" if node.is_missing else "error", node.type, line.strip())


def _describe(node: ts.Node, text: str) -> str:
    """'missing ";"' or 'unexpected `...`' for one problem node."""
    if node.is_missing:
        return f"missing {node.type!r}"
    data = text.encode("utf-8", "surrogatepass")[node.start_byte : node.end_byte]
    snippet = " ".join(data.decode("utf-8", "replace").split())
    snippet = snippet if len(snippet) <= 40 else snippet[:37] + "..."
    return f"syntax error at `{snippet}`" if snippet else "syntax error"
