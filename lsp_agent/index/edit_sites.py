"""Where a changed definition is used: the call sites and attribute uses its change makes stale.

Calls are found through the index's references (`WorkspaceIndex.find_symbol`), attribute uses through the files
that mention the name; each candidate file is parsed and every use checked against the change: a Python call is
kept only when its arguments no longer bind to the new signature as they did to the old one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from lsp_agent.index.signatures import VAR_KINDS, DefinitionChange, Param, parse_tree, renamed_map

CALL_TYPES = ("call", "call_expression", "method_invocation", "new_expression", "object_creation_expression")
MAX_SITE_LINES = 30  # a call spanning more lines than this is not offered (the model would rewrite too much)
MAX_REFERENCES = 5000


@dataclass(frozen=True)
class EditSite:
    """Lines of one file to update: `start` (0-based) to `end` (exclusive), as the text was read."""

    path: str
    start: int
    end: int
    text: str


def find_sites(
    index: Any,
    change: DefinitionChange,
    read_text: Callable[[str], str | None],
    edited: tuple[str, str] | None = None,
) -> list[EditSite]:
    """The sites of `change` in the workspace of `index` (a WorkspaceIndex), by path and line.

    `read_text(rel)` gives a file's current text (an open buffer's or the disk's); `edited` is the (path, text) of
    the document the change was made in, always searched, whose definition header is never a site.
    """
    paths: list[str] = []
    if change.kind == "call":
        hits = index.find_symbol(change.callee, limit=MAX_REFERENCES) if index is not None else []
        paths = sorted({h.path for h in hits if h.role == "reference"})
    elif index is not None:
        paths = list(index.files_mentioning(change.callee))
    if edited is not None and edited[0] not in paths:
        paths.append(edited[0])
    sites: list[EditSite] = []
    for path in paths:
        text = edited[1] if edited is not None and path == edited[0] else read_text(path)
        if text is None:
            continue
        skip = _definition_rows(change) if edited is not None and path == edited[0] else range(0)
        sites.extend(file_sites(path, text, change, skip))
    return sites


def _definition_rows(change: DefinitionChange) -> range:
    """The rows of the changed definition's header (0-based), which the user just edited."""
    first = change.after.line - 1
    return range(first, first + max(1, change.after.header.count("\n") + 1))


def file_sites(path: str, text: str, change: DefinitionChange, skip: range = range(0)) -> list[EditSite]:
    """The sites of `change` in one file's text (whole lines; overlapping uses merge into one site)."""
    parsed = parse_tree(path, text)
    if parsed is None:
        return []
    lang, tree = parsed
    spans: list[tuple[int, int]] = []
    for node in uses(tree.root_node, change.kind, change.callee):
        first, last = node.start_point.row, node.end_point.row
        if any(row in skip for row in (first, last)) or last - first + 1 > MAX_SITE_LINES:
            continue
        if change.kind == "call" and not (
            _fits_kind(node, change, lang) and call_needs_update(change, node, lang)
        ):
            continue
        spans.append((first, last + 1))
    lines = text.splitlines(keepends=True)
    return [EditSite(path, a, b, "".join(lines[a:b])) for a, b in _merge(spans)]


def uses(root: ts.Node, kind: str, name: str) -> list[ts.Node]:
    """Calls of `name` (`name(...)`, `x.name(...)`) for kind "call", else attribute accesses `x.name`, in order."""
    found: list[ts.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if kind == "call" and node.type in CALL_TYPES and _callee_name(node) == name:
            found.append(node)
        elif kind == "attribute" and node.type in ("attribute", "member_expression", "field_expression"):
            attr = node.child_by_field_name("attribute") or node.child_by_field_name("property")
            attr = attr or node.child_by_field_name("field")
            if attr is not None and _text(attr) == name:
                found.append(node)
        stack.extend(reversed(node.children))
    return sorted(found, key=lambda n: n.start_byte)


def _callee_name(call: ts.Node) -> str | None:
    """The last name of what a call calls (`f`, `obj.f`, `pkg.Class`)."""
    target = (
        call.child_by_field_name("function")
        or call.child_by_field_name("constructor")
        or call.child_by_field_name("type")
        or call.child_by_field_name("name")
    )
    while target is not None and target.named_child_count and "identifier" not in target.type:
        target = (
            target.child_by_field_name("attribute")
            or target.child_by_field_name("property")
            or target.child_by_field_name("field")
            or target.child_by_field_name("name")
            or target.named_children[-1]
        )
    return _text(target) if target is not None else None


def _fits_kind(call: ts.Node, change: DefinitionChange, lang: str) -> bool:
    """Python: a method is called as `x.name(...)`, a function or class as `name(...)` or `module.name(...)`
    (other languages, where a method may be called bare, are not told apart)."""
    target = call.child_by_field_name("function")
    if lang != "python" or target is None:
        return True
    if target.type != "attribute":
        return change.after.kind != "method"
    if change.after.kind == "method":
        return True
    obj = target.child_by_field_name("object")
    return obj is not None and obj.type in ("identifier", "attribute") and _text(obj) not in ("self", "cls")


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping line spans joined (a call nested in another's arguments is one site)."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


# ----- does a call still fit? ---------------------------------------------------------------------------------


def call_needs_update(change: DefinitionChange, call: ts.Node, lang: str) -> bool:
    """True when a call's arguments no longer bind to the new signature as they bound to the old one."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return False  # a decorator without arguments or a bare reference
    if lang != "python":  # positional arguments only: a rename never breaks a call, anything else may
        return bool(change.removed or change.added or change.reordered or change.now_required)
    positional, keywords, splat = 0, [], False
    for arg in args.named_children:
        if arg.type == "keyword_argument":
            keywords.append(_text(arg.child_by_field_name("name") or arg))
        elif arg.type in ("list_splat", "dictionary_splat"):
            splat = True
        elif arg.type != "comment":
            positional += 1
    before = bind(change.before.params, positional, keywords)
    after = bind(change.after.params, positional, keywords)
    if splat:  # *args or **kwargs forward what the caller got: the caller's callers are the ones to update
        return False
    if before is None:
        return False  # did not fit before the edit either (another function of that name, or already broken)
    if after is None:
        return True
    renames = list(change.renamed)
    return [renamed_map(name, renames) for name in before] != after


def bind(params: tuple[Param, ...], positional: int, keywords: list[str]) -> list[str] | None:
    """The parameter each argument lands in (positional ones first), or None when the call does not fit."""
    slots = [p for p in params if p.kind in ("positional", "positional_only")]
    var_pos = any(p.kind == "var_positional" for p in params)
    var_kw = any(p.kind == "var_keyword" for p in params)
    if positional > len(slots) and not var_pos:
        return None
    bound = [p.name for p in slots[:positional]]
    bound += ["*"] * max(0, positional - len(slots))
    by_name = {p.name: p for p in params if p.kind not in VAR_KINDS}
    for key in keywords:
        param = by_name.get(key)
        if param is None and not var_kw:
            return None
        if param is not None and (param.kind == "positional_only" or key in bound):
            return None
        bound.append(key if param is not None else "**")
    required = [p.name for p in params if not p.has_default and p.kind not in VAR_KINDS]
    if any(name not in bound for name in required):
        return None
    return bound
