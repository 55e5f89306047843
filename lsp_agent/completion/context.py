"""Repository context of a completion, within a token budget: the definitions (signature and docstring) of the
names used around the cursor and of what the file imports, the chunks most like the lines before the cursor
(RepoCoder's retrieval by the code being written), and the regions the user edited lately.

Runs in a worker thread: the index's lookups block. Secret files never contribute (the index leaves them out; the
edited regions are checked here).
"""

from __future__ import annotations

import builtins
import keyword
import logging
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.completion.own_file import OWN, own_outline
from lsp_agent.completion.prompt import Snippet, window_lines
from lsp_agent.completion.syntax import kept_tree
from lsp_agent.index.symbol_lookup import indexed_definitions

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
NAME_LINES = 12  # lines before the cursor whose names are looked up
QUERY_LINES = 10  # lines before the cursor's line that make the similarity query
MAX_NAMES, MAX_SIMILAR = 14, 3
# shares of the budget, at most: the definitions of what the file imports (chosen in import order, the same for
# the whole file: the prompt's head), then the open file's outline beyond the window (per band of lines)
HEAD_SHARE, OWN_SHARE = 0.3, 0.4
IMPORTED = (
    "imported"  # the Snippet kind of a definition of a name the file imports (not used near the cursor)
)
GROUPS = (IMPORTED, "definition", "similar", "edit", OWN)
DEFINITION_LINES, CHUNK_LINES = 14, 30
IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
PY_FROM = re.compile(r"^\s*from\s+[\w.]+\s+import\s+\(?([^)#\n]+)", re.M)
PY_IMPORT = re.compile(r"^\s*import\s+([\w.]+)", re.M)
METHOD = re.compile(r"\s+(?:async\s+)?(?:def|function|fn|func)\s")
JS_IMPORT = re.compile(r"^\s*import\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s", re.M)
COMMON = (
    frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls", "this", "true", "false", "null"}
)
COMMON |= {
    "const",
    "let",
    "var",
    "function",
    "return",
    "async",
    "await",
    "new",
    "typeof",
    "void",
    "func",
    "fn",
}


@dataclass
class ContextRequest:
    """What the context is gathered for: the open file (relative path, lines) and the cursor's line."""

    rel: str
    lines: list[str]
    line: int
    budget_tokens: int
    edits: list[tuple[str, int, str]] = field(
        default_factory=list
    )  # (rel path, first line, text), newest first
    document_key: str = ""  # the document's URI, whose kept parse the outline reuses


def names_near(lines: list[str], line: int, text_before: str) -> list[tuple[str, bool]]:
    """(name, imported) of the names used in the lines before the cursor, nearest first (imported False), then
    of the names the file imports (imported True)."""
    names: list[str] = []
    for source in [text_before, *reversed(lines[max(0, line - NAME_LINES) : line])]:
        for name in reversed(IDENTIFIER.findall(source)):
            if len(name) > 2 and name not in COMMON and name not in names:
                names.append(name)
    imported = [n for n in imported_names("\n".join(lines)) if n not in names[:MAX_NAMES]][:MAX_NAMES]
    return [(n, False) for n in names[:MAX_NAMES]] + [(n, True) for n in imported]


def imported_names(text: str) -> list[str]:
    """The names a Python or JavaScript/TypeScript file imports."""
    found: list[str] = []
    for group in PY_FROM.findall(text):
        found += [part.split(" as ")[0].strip() for part in group.split(",")]
    found += [module.rsplit(".", 1)[-1] for module in PY_IMPORT.findall(text)]
    for default, named in JS_IMPORT.findall(text):
        found += [default] + [part.split(" as ")[0].strip() for part in named.split(",")]
    return list(dict.fromkeys(n for n in found if n.isidentifier() and n not in COMMON))


def signature_and_doc(lines: list[str], first: int, last: int) -> str:
    """A definition's header and docstring (and a class's method headers); short definitions whole."""
    body = lines[first : last + 1]
    if len(body) <= 6:
        return "\n".join(body)
    header = next((i for i, line in enumerate(body[:6]) if line.rstrip().endswith((":", "{", "=>"))), 0)
    kept = body[: header + 1]
    i = header + 1
    while i < len(body) and not body[i].strip():
        i += 1
    doc = body[i].lstrip() if i < len(body) else ""
    quote = next((q for q in ('"""', "'''") if doc.startswith(q)), None)
    if quote is not None:  # a docstring: up to its closing quotes
        end = (
            i if doc.count(quote) >= 2 else next((j for j in range(i + 1, len(body)) if quote in body[j]), i)
        )
        kept += body[i : min(end + 1, i + DEFINITION_LINES)]
        i = end + 1
    indent = len(body[0]) - len(body[0].lstrip())
    methods = [x for x in body[i:] if METHOD.match(x) and len(x) - len(x.lstrip()) > indent]
    kept += methods[: max(0, DEFINITION_LINES - len(kept))]
    return "\n".join([*kept, " " * (indent + 4) + "..."])


def definitions(
    index: Any,
    request: ContextRequest,
    read_lines: Callable[[str], list[str]],
    names: list[tuple[str, bool]],
    seen: set[tuple[str, int]],
) -> list[Snippet]:
    """Headers and docstrings of (name, imported) names defined in other files (the index's symbol table), but
    for the definitions in `seen` (which it extends)."""
    out: list[Snippet] = []
    try:
        conn = sqlite3.connect(f"file:{index.db_path}?mode=ro", uri=True, timeout=0.2)
    except (sqlite3.Error, AttributeError) as exc:
        log.debug("no symbol table: %s", exc)
        return []
    try:
        for name, imported in names:
            try:
                rows = indexed_definitions(conn, name, 3)
            except sqlite3.Error as exc:  # a busy or changing index costs this name only
                log.debug("definitions of %s: %s", name, exc)
                continue
            for _, _, _, path, line, end_line in rows:
                if path == request.rel:
                    continue
                if (path, line) in seen:
                    break  # shown already (the head has it, or another name's lookup found it)
                seen.add((path, line))
                lines = read_lines(path)
                if lines:
                    text = signature_and_doc(lines, line - 1, end_line - 1)
                    out.append(Snippet(path, text, IMPORTED if imported else "definition", (line, end_line)))
                break  # the first definition of a name is enough
    finally:
        conn.close()
    return out


def similar_chunks(index: Any, request: ContextRequest) -> list[Snippet]:
    """The indexed chunks of other files most like the lines before the cursor's line."""
    query = "\n".join(
        x for x in request.lines[max(0, request.line - QUERY_LINES) : request.line] if x.strip()
    )
    if len(IDENTIFIER.findall(query)) < 2:
        return []
    try:
        hits = index.search(query, top_k=MAX_SIMILAR * 3)
    except Exception as exc:  # noqa: BLE001 - no similar code is no context, not a failure
        log.debug("similar chunks: %s", exc)
        return []
    out = [
        Snippet(h.path, "\n".join(h.text.splitlines()[:CHUNK_LINES]), "similar", (h.start, h.end))
        for h in hits
        if h.path != request.rel
    ]
    return out[:MAX_SIMILAR]


def gather(
    index: Any,
    request: ContextRequest,
    read_lines: Callable[[str], list[str]],
    is_secret: Callable[[str], bool],
) -> list[Snippet]:
    """The context snippets within the budget and in prompt order (`prompt_order`): first the head, the same for the
    whole file (the definitions of its imports, in import order, up to HEAD_SHARE of the budget), then what
    depends on the cursor's band of lines, chosen by value: the open file's outline (up to OWN_SHARE), the
    definitions of the names near the cursor, recent edits, similar code."""
    budget = request.budget_tokens * CHARS_PER_TOKEN
    if budget <= 0:
        return []

    def readable(rel: str) -> list[str]:  # an index that still lists a secret file: its lines are never read
        return [] if is_secret(rel) else read_lines(rel)

    text = "\n".join(request.lines)
    seen: set[tuple[str, int]] = set()
    imported = [(name, True) for name in imported_names(text)[:MAX_NAMES]]
    head = definitions(index, request, readable, imported, seen) if index is not None else []
    chosen = _within(head, int(budget * HEAD_SHARE), is_secret)  # the same for the whole file (its imports)
    budget -= sum(_cost(s) for s in chosen)
    tree = kept_tree(request.document_key, text) if request.document_key else None
    own = own_outline(request.rel, request.lines, request.line, window_lines(request.line), tree)
    shown_own = _within(own, int(request.budget_tokens * CHARS_PER_TOKEN * OWN_SHARE), is_secret)
    chosen += shown_own
    budget -= sum(_cost(s) for s in shown_own)
    seen = {(s.path, s.lines[0]) for s in chosen}  # a head definition left out may come back for a near name
    text_before = request.lines[request.line] if request.line < len(request.lines) else ""
    near = [(n, False) for n, _ in names_near(request.lines, request.line, text_before)]
    found_defs = definitions(index, request, readable, near, seen) if index is not None else []
    edits = [Snippet(rel, text, "edit") for rel, _, text in request.edits if not is_secret(rel)]
    similar = similar_chunks(index, request) if index is not None else []
    for snippet in found_defs + edits + similar:  # by value: definitions first
        if snippet.kind == "similar" and any(_overlap(snippet, shown) for shown in chosen):
            continue  # a definition of it is shown already
        if _cost(snippet) <= budget and not is_secret(snippet.path):
            chosen.append(snippet)
            budget -= _cost(snippet)
    return prompt_order(chosen)


def _within(snippets: list[Snippet], budget: int, is_secret: Callable[[str], bool]) -> list[Snippet]:
    """The snippets, in their order, that fit the budget (a long one skipped, shorter ones after it kept)."""
    kept: list[Snippet] = []
    for snippet in snippets:
        if _cost(snippet) <= budget and not is_secret(snippet.path):
            kept.append(snippet)
            budget -= _cost(snippet)
    return kept


def _cost(snippet: Snippet) -> int:
    """A snippet's characters in the prompt (the open file's outline has no path line)."""
    return len(snippet.text) + 1 + (0 if snippet.kind == OWN else len(snippet.path) + 1)


def prompt_order(snippets: list[Snippet]) -> list[Snippet]:
    """The order that keeps the prompt's start the same the longest (a model server reuses the evaluated start of
    the last prompt): what changes least first (the definitions of the file's imports, then of the names near the
    cursor, similar code, recent edits, the open file's outline), each group by path and line, not by rank, so
    a snippet that moves up or down a ranking moves nothing in the prompt."""
    return sorted(snippets, key=lambda s: (GROUPS.index(s.kind), s.path, s.lines))


def _overlap(a: Snippet, b: Snippet) -> bool:
    """Whether two snippets show overlapping lines of one file."""
    return a.path == b.path and a.lines[0] <= b.lines[1] and b.lines[0] <= a.lines[1] and a.lines != (0, 0)


def relative_path(path: Path, root: Path | None) -> str:
    """A POSIX path relative to the root (the name alone outside it)."""
    try:
        return path.relative_to(root).as_posix() if root else path.name
    except ValueError:
        return path.name


def line_reader(
    root: Path, buffers: dict[str, str], is_secret: Callable[[str], bool] = lambda rel: False
) -> Callable[[str], list[str]]:
    """Lines of a workspace file: its open buffer, else the disk ([] when unreadable or secret)."""

    def read(rel: str) -> list[str]:
        if is_secret(rel):
            return []
        text = buffers.get(rel)
        if text is None:
            try:
                text = (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return []
        return text.split("\n")

    return read
