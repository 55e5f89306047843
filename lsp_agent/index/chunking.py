"""Split a file into chunks and symbols with tree-sitter tag queries (line windows when no grammar is installed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter

import tree_sitter as ts

from lsp_agent.index.incremental_parse import ParsedFile, parse_version
from lsp_agent.index.languages import LanguageSpec, full_query, language_for_path, load_language, parser_for
from lsp_agent.index.models import Chunk, FileAnalysis, Symbol
from lsp_agent.index.tokens import chunk_terms, identifier_counts, text_terms

MAX_CHUNK_CHARS = 1000  # a class larger than this (~250 tokens, an embedding window) is split into members
MAX_DEF_LINES = 150  # a function longer than this is cut into windows
WINDOW_LINES = 50  # line windows for module code, long functions and files without a grammar
CONTAINER_KINDS = frozenset({"class", "interface", "impl", "struct", "enum", "trait", "union"})
# A function directly inside one of these is a method; a large one is chunked as a skeleton plus its members.
SCOPE_KINDS = frozenset({"module", "namespace"})  # transparent: their members are chunked as if top-level
FUNCTION_KINDS = frozenset({"function", "method"})  # without a body (a prototype, a signature) not a chunk
CHUNK_KINDS = CONTAINER_KINDS | FUNCTION_KINDS | {"module_definition"}
SYMBOL_BOOST = 2  # extra copies of symbol-name tokens (a cheap field weight); not for skeletons, whose
# signatures already repeat their members' names
PATH_BOOST = 1  # extra copies of path tokens
MAX_DEF_DEPTH = 6  # deepest tree level where indexing looks for definitions (a decorated method of a nested
# class starts at 6); deeper ones (functions inside functions inside methods) never get chunks of their own


@dataclass(slots=True)
class _Def:
    """A definition found by the tag query, with its place in the nesting."""

    name: str
    kind: str
    node: ts.Node
    start_row: int  # 0-based, widened over decorators and leading comments
    end_row: int
    start_byte: int  # the node's own span, for nesting
    end_byte: int
    qualified: str = ""
    scope: str = ""  # the type it belongs to when defined outside it (Go receiver, C++ `Type::method`)
    chunk: bool = False  # gets a chunk of its own (a chunk kind, and a function with a body)
    children: list[_Def] = field(default_factory=list)


def _end_row(node: ts.Node) -> int:
    """Last row a node really covers (a node ending at column 0 ends on the previous line)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def _widen(node: ts.Node, wrappers: frozenset[str]) -> ts.Node:
    """The decorator/export wrapper around a definition, if any."""
    parent = node.parent
    while parent is not None and parent.type in wrappers:
        node, parent = parent, parent.parent
    return node


def _leading_row(node: ts.Node, leading: frozenset[str]) -> int:
    """Start row including the comments (and the language's `leading` nodes, e.g. attributes) directly above."""
    row = node.start_point[0]
    prev = node.prev_named_sibling
    while prev is not None and ("comment" in prev.type or prev.type in leading) and _end_row(prev) >= row - 1:
        row = prev.start_point[0]
        prev = prev.prev_named_sibling
    return row


@cache
def _capture_roles(query: ts.Query) -> dict[str, tuple[str, str, bool]]:
    """capture name -> (role, kind, is the name node) for the tag captures of a query (one per language)."""
    out = {}
    for i in range(query.capture_count):
        cap = query.capture_name(i)
        parts = cap.split(".")
        if parts[0] == "name" and len(parts) == 3:
            out[cap] = (parts[1], parts[2], True)
        elif parts[0] in ("definition", "reference") and len(parts) == 2:
            out[cap] = (parts[0], parts[1], False)
        elif cap == "scope":
            out[cap] = ("scope", "", False)
    return out


_LINE_NAME_KIND = itemgetter(4, 0, 3)


def _nesting_order(d: _Def) -> tuple[int, int]:
    """Sort key putting a definition before the ones nested in it."""
    return d.start_byte, -d.end_byte


def _enclosing(node: ts.Node, spans: dict[int, ts.Node]) -> ts.Node | None:
    """The nearest definition span above a node."""
    span = node.parent
    while span is not None and span.id not in spans:
        span = span.parent
    return span


def _scope_name(text: str) -> str:
    """`ns::Box<T>` -> `ns.Box`: a scope as the dotted prefix of qualified names."""
    return ".".join(part.split("<", 1)[0].strip() for part in text.split("::") if part.strip())


def _body_of(node: ts.Node) -> ts.Node | None:
    """The body of a function-like definition, or of the function it declares (`const f = () => {...}`)."""
    for _ in range(3):
        body = node.child_by_field_name("body")
        if body is not None:
            return body
        value = node.child_by_field_name("value")
        if value is None:
            if node.named_child_count != 1:
                return None
            value = node.named_children[0]
        node = value
    return None


def _references(captures: dict[str, list[ts.Node]], roles: dict, def_names: set[int]) -> list[Symbol]:
    """Reference symbols, each node once and never a definition's own name (broad patterns such as any type)."""
    seen = set(def_names)
    refs = []
    # The broad `type` patterns (any type name) come last: a node a specific pattern matched keeps that kind.
    for cap, nodes in sorted(captures.items(), key=lambda item: roles.get(item[0], ("", ""))[1] == "type"):
        role, kind, is_name = roles.get(cap, ("", "", False))
        if role != "reference" or not is_name:
            continue
        for node in nodes:
            if node.id not in seen:
                seen.add(node.id)
                line = node.start_point[0] + 1
                refs.append(Symbol(node.text.decode("utf-8", "replace"), None, "reference", kind, line, line))
    refs.sort(key=_LINE_NAME_KIND)  # the same order however the tree was parsed (fresh or incremental)
    return refs


def _nest(defs: list[_Def]) -> list[_Def]:
    """Link definitions to the ones they contain; qualified names and methods follow. Returns the top level."""
    defs.sort(key=_nesting_order)
    roots: list[_Def] = []
    stack: list[_Def] = []
    for d in defs:
        while stack and stack[-1].end_byte <= d.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        if d.kind == "function" and (d.scope or (parent is not None and parent.kind in CONTAINER_KINDS)):
            d.kind = "method"
        prefix = parent.qualified if parent else ""
        if d.scope:
            prefix = f"{prefix}.{d.scope}" if prefix else d.scope
        d.qualified = f"{prefix}.{d.name}" if prefix else d.name
        (parent.children if parent else roots).append(d)
        if d.chunk or d.kind in SCOPE_KINDS:  # a constant, field or type alias qualifies nothing inside it
            stack.append(d)
    return roots


_NO_ROLE = ("", "", False)


def _definition(
    node: ts.Node, kind: str, span: ts.Node, scopes: dict[int, list[ts.Node]], spec: LanguageSpec
) -> _Def:
    """A definition from its name node and span: chunk or not, first row (over comments, wrappers), scope."""
    name = node.text.decode("utf-8", "replace")
    if "::" in name:  # a C++ nested namespace `a::b`
        name = _scope_name(name)
    d = _Def(name, kind, span, span.start_point[0], _end_row(span), span.start_byte, span.end_byte)
    d.chunk = kind in CHUNK_KINDS and (kind not in FUNCTION_KINDS or _body_of(span) is not None)
    if d.chunk:
        d.start_row = _leading_row(_widen(span, spec.wrappers) if spec.wrappers else span, spec.leading)
    if scopes and span.id in scopes:
        parts = sorted(scopes[span.id], key=lambda n: n.start_byte)
        d.scope = ".".join(_scope_name(n.text.decode("utf-8", "replace")) for n in parts)
    return d


def _collect(
    root: ts.Node, lang: str, references: bool = False
) -> tuple[list[_Def], list[Symbol], list[_Def]]:
    """Run the tag query: (nested definitions, references, all definitions).

    Indexing asks for definitions only, down to the language's definition depth (MAX_DEF_DEPTH unless its query
    says otherwise; the query then skips expression subtrees, which is most of a tree); find_symbol asks for
    references too, over the whole tree.
    """
    loaded = load_language(lang)
    assert loaded is not None
    roles = _capture_roles(loaded.definitions)  # the same captures as the full query
    if references:
        cursor = ts.QueryCursor(full_query(lang))
    else:
        cursor = ts.QueryCursor(loaded.definitions)
        cursor.set_max_start_depth(loaded.spec.max_depth or MAX_DEF_DEPTH)
    captures = cursor.captures(root)
    spans = {
        node.id: node
        for cap, nodes in captures.items()
        if roles.get(cap, ("", "", True))[0] == "definition" and not roles[cap][2]
        for node in nodes
    }
    scopes: dict[int, list[ts.Node]] = {}
    for node in captures.get("scope", ()):
        span = _enclosing(node, spans)
        if span is not None:
            scopes.setdefault(span.id, []).append(node)
    defs: list[_Def] = []
    def_names: set[int] = set()
    # A name node captured twice (`const f = () => ...` is a function and a constant): the chunk kind wins.
    for cap, nodes in sorted(
        captures.items(), key=lambda item: roles.get(item[0], _NO_ROLE)[1] not in CHUNK_KINDS
    ):
        role, kind, is_name = roles.get(cap, _NO_ROLE)
        if role == "definition" and is_name:
            for node in nodes:
                if node.id not in def_names:
                    def_names.add(node.id)
                    defs.append(_definition(node, kind, _enclosing(node, spans) or node, scopes, loaded.spec))
    refs = _references(captures, roles, def_names) if references else []
    return _nest(defs), refs, defs


def _windows(lines: list[str], first: int, last: int, symbol: str | None, kind: str) -> list[Chunk]:
    """Cut rows first..last (0-based, inclusive) into non-blank windows of WINDOW_LINES."""
    out = []
    row = first
    while row <= last:
        end = min(row + WINDOW_LINES - 1, last)
        a, b = row, end
        while a <= b and not lines[a].strip():
            a += 1
        while b >= a and not lines[b].strip():
            b -= 1
        if a <= b:
            out.append(Chunk(a + 1, b + 1, symbol, kind, "\n".join(lines[a : b + 1])))
        row = end + 1
    return out


def _indent(line: str) -> str:
    """The leading whitespace of a line."""
    return line[: len(line) - len(line.lstrip())]


def _elided(child: _Def, lines: list[str]) -> list[str]:
    """A member with its body cut to `...`: signature lines, a Python docstring's first line, a closing brace."""
    body = _body_of(child.node)
    top = child.node.start_point[0]
    if body is None or _end_row(body) <= top:
        return lines[child.start_row : child.end_row + 1]
    body_row, body_end = body.start_point[0], _end_row(body)
    if body.text[:1] == b"{":  # braces: keep the line opening the body and the one closing it
        if body_end <= body_row + 1:
            return lines[child.start_row : child.end_row + 1]
        inner = lines[body_row + 1]
        indent = _indent(inner) if inner.strip() else _indent(lines[top]) + "    "
        return [*lines[child.start_row : body_row + 1], indent + "...", *lines[body_end : child.end_row + 1]]
    if body_row <= top:  # a one-line body after the signature (`def f(): pass`, `=> x`)
        return lines[child.start_row : child.end_row + 1]
    kept = lines[child.start_row : body_row]
    first = body.named_children[0] if body.named_children else None
    if first is not None and first.type == "expression_statement" and first.named_children:
        if first.named_children[0].type == "string":
            kept.append(lines[first.start_point[0]])
    kept.append(_indent(lines[body_row]) + "...")
    return kept


def _skeleton(d: _Def, lines: list[str]) -> str:
    """The container with every member body elided to `...` (signatures, fields and doc first lines kept)."""
    kept: list[str] = []
    row = d.start_row
    for child in d.children:
        if not child.chunk:
            continue
        kept.extend(lines[row : child.start_row])
        kept.extend(_elided(child, lines))
        row = child.end_row + 1
    kept.extend(lines[row : d.end_row + 1])
    return "\n".join(kept)


def _chunk_def(d: _Def, lines: list[str], out: list[Chunk]) -> None:
    """Emit one definition: whole, as skeleton + members, or in windows when long without members to split."""
    text = "\n".join(lines[d.start_row : d.end_row + 1])
    members = [c for c in d.children if c.chunk]
    if d.kind in CONTAINER_KINDS and len(text) > MAX_CHUNK_CHARS and members:
        out.append(Chunk(d.start_row + 1, d.end_row + 1, d.qualified, d.kind, _skeleton(d, lines)))
        for child in members:
            _chunk_def(child, lines, out)
    elif (d.kind not in CONTAINER_KINDS or not members) and d.end_row - d.start_row + 1 > MAX_DEF_LINES:
        out.extend(_windows(lines, d.start_row, d.end_row, d.qualified, d.kind))
    else:
        out.append(Chunk(d.start_row + 1, d.end_row + 1, d.qualified, d.kind, text))


def _chunk_roots(roots: list[_Def]) -> list[_Def]:
    """The definitions chunked at top level: namespaces and modules open up into their members."""
    out: list[_Def] = []
    for d in roots:
        if d.kind in SCOPE_KINDS:
            out.extend(_chunk_roots(d.children))
        elif d.chunk:
            out.append(d)
    return out


def _chunk_tree(roots: list[_Def], lines: list[str]) -> list[Chunk]:
    """Chunks for the definitions plus windows for the module code between them."""
    out: list[Chunk] = []
    row = 0
    for d in _chunk_roots(roots):
        if d.start_row > row:
            out.extend(_windows(lines, row, d.start_row - 1, None, "module"))
        _chunk_def(d, lines, out)
        row = max(row, d.end_row + 1)
    if row < len(lines):
        out.extend(_windows(lines, row, len(lines) - 1, None, "module"))
    return out


def _definitions(all_defs: list[_Def]) -> list[Symbol]:
    """Definition symbols with their qualified names."""
    return [
        Symbol(d.name, d.qualified, "definition", d.kind, d.node.start_point[0] + 1, d.end_row + 1)
        for d in all_defs
    ]


def _path_words(rel_path: str) -> str:
    """The path as words for the path field (directories and file stem)."""
    return rel_path.rsplit(".", 1)[0].replace("/", " ")


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them (only \\n ends a line; a trailing \\r is dropped)."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines] if "\r" in text else lines


def analyze(rel_path: str, text: str, previous: ParsedFile | None = None) -> FileAnalysis:
    """Chunks, their search tokens and the symbols of one file version (`previous` enables incremental parsing)."""
    analysis, _ = analyze_with_tree(rel_path, text, previous)
    return analysis


def analyze_with_tree(
    rel_path: str, text: str, previous: ParsedFile | None = None
) -> tuple[FileAnalysis, ParsedFile | None]:
    """analyze() that also returns (source bytes, tree) for the next incremental parse."""
    lines = split_lines(text)
    lang = language_for_path(rel_path, text)
    parsed: ParsedFile | None = None
    if lang is None:
        chunks = _windows(lines, 0, len(lines) - 1, None, "lines")
        symbols: list[Symbol] = []
        lang_name = "text"
    else:
        parser = parser_for(lang)
        assert parser is not None
        data = text.encode("utf-8", "surrogatepass")
        tree = parse_version(parser, data, previous)
        parsed = (data, tree)
        roots, _, all_defs = _collect(tree.root_node, lang)
        chunks = _chunk_tree(roots, lines)
        symbols = _definitions(all_defs)
        lang_name = lang
    path_terms = text_terms(_path_words(rel_path)) * PATH_BOOST
    tokens = []
    for c in chunks:
        if c.symbol and not (c.kind in CONTAINER_KINDS and c.end - c.start + 1 > c.text.count("\n") + 1):
            tokens.append(chunk_terms(c.text, path_terms + text_terms(c.symbol) * SYMBOL_BOOST))
        else:
            tokens.append(chunk_terms(c.text, path_terms))
    return FileAnalysis(lang_name, chunks, tokens, symbols, identifier_counts(text)), parsed


def file_symbols(
    rel_path: str, text: str, references: bool = True, tree: ts.Tree | None = None
) -> list[Symbol]:
    """Every definition and reference of one file, at any depth (find_symbol's on-demand pass); [] without a grammar.
    Without references: the definitions as the index keeps them; `tree`: the text's parse, when the caller has it."""
    lang = language_for_path(rel_path, text)
    if lang is None:
        return []
    parser = parser_for(lang)
    assert parser is not None
    tree = tree or parser.parse(text.encode("utf-8", "surrogatepass"))
    _, refs, all_defs = _collect(tree.root_node, lang, references=references)
    return _definitions(all_defs) + refs
