"""Definitions' call shapes (parameters, constructor fields, attributes) and what an edit changed in them."""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from lsp_agent.index.languages import language_for_path, parser_for

RECEIVERS = ("self", "cls")  # a method's first parameter, not passed at call sites
VAR_KINDS = ("var_positional", "var_keyword")
CONTAINER_WORDS = ("class", "struct", "impl", "interface", "trait")
MAX_DEPTH = 8


@dataclass(frozen=True)
class Param:
    """One parameter (or constructor field): its name, how it is passed, whether it may be left out."""

    name: str
    kind: str = "positional"  # positional | positional_only | keyword | var_positional | var_keyword
    has_default: bool = False


@dataclass(frozen=True)
class Definition:
    """A function, method or class as callers see it; lines are 1-based."""

    qualified_name: str
    name: str
    kind: str  # function | method | class
    line: int
    end_line: int
    header: str  # the text callers need: a function's signature, a class's fields and constructor
    params: tuple[Param, ...] = ()  # what a call passes (a method without self, a class's constructor)
    attributes: tuple[str, ...] = ()  # a class's fields and the self.X it assigns, in order


@dataclass(frozen=True)
class DefinitionChange:
    """What one edit changed in a definition that its call sites or attribute uses must follow."""

    before: Definition
    after: Definition
    kind: str  # "call": call sites of `callee` change; "attribute": uses of `.callee` change
    callee: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    reordered: bool = False
    now_required: tuple[str, ...] = ()  # added without a default, or lost their default
    now_keyword: tuple[str, ...] = ()  # could be passed by position, now only by name

    def describe(self) -> str:
        """A short plain-English account of the change (for titles, logs and the model's prompt)."""
        if self.kind == "attribute":
            old, new = self.renamed[0]
            return f"attribute `{old}` of `{self.after.qualified_name}` renamed to `{new}`"
        parts = [f"`{a}` renamed to `{b}`" for a, b in self.renamed]
        parts += [f"`{n}` removed" for n in self.removed]
        parts += [f"new required `{n}`" if n in self.now_required else f"`{n}` added" for n in self.added]
        parts += [f"`{n}` now required" for n in self.now_required if n not in self.added]
        parts += [f"`{n}` now keyword-only" for n in self.now_keyword]
        if self.reordered:
            parts.append("parameters reordered")
        what = "constructor of" if self.after.kind == "class" else "signature of"
        return f"{what} `{self.after.qualified_name}`: " + ", ".join(parts)


# ----- reading definitions ------------------------------------------------------------------------------------


def parse_tree(rel_path: str, text: str) -> tuple[str, ts.Tree] | None:
    """(language, tree) of a file, or None without a grammar."""
    lang = language_for_path(rel_path, text)
    parser = parser_for(lang) if lang else None
    if lang is None or parser is None:
        return None
    return lang, parser.parse(text.encode("utf-8", "surrogatepass"))


def definitions(rel_path: str, text: str) -> dict[str, Definition]:
    """The file's functions, methods and classes by qualified name ({} without a grammar or on errors in them).

    Read from the syntax tree of the index's grammar for the file (one parse, no tag query: this runs at every
    pause in typing). A definition whose header has a syntax error (the user is typing in it) is left out, so a
    half-typed edit is never diffed.
    """
    parsed = parse_tree(rel_path, text)
    if parsed is None:
        return {}
    lang, tree = parsed
    lines = text.splitlines()
    out: dict[str, Definition] = {}
    for node, classes in _definition_nodes(tree.root_node, [], 0):
        name_node = node.child_by_field_name("name")
        if name_node is None or _header_broken(node):
            continue
        name = _text(name_node)
        qname = ".".join([*classes, name])  # as the index's tag query qualifies it (Class.method)
        if _is_container(node):
            out[qname] = _class_definition(node, qname, name, lang, lines)
        else:
            out[qname] = _function_definition(node, qname, name, bool(classes), lang, lines)
    return out


def _definition_nodes(node: ts.Node, classes: list[str], depth: int) -> list[tuple[ts.Node, list[str]]]:
    """Function-like nodes (a name and parameters) and classes, with the classes around each."""
    found: list[tuple[ts.Node, list[str]]] = []
    if depth > MAX_DEPTH:
        return found
    for child in node.named_children:
        name = child.child_by_field_name("name")
        if child.child_by_field_name("parameters") is not None and name is not None:
            found.append((child, classes))
            continue  # nested functions are not reachable from call sites elsewhere
        if _is_container(child) and name is not None:
            found.append((child, classes))
            found.extend(_definition_nodes(child, [*classes, _text(name)], depth + 1))
            continue
        found.extend(_definition_nodes(child, classes, depth + 1))
    return found


def _is_container(node: ts.Node) -> bool:
    return any(word in node.type for word in CONTAINER_WORDS) and node.child_by_field_name("body") is not None


def _header_broken(node: ts.Node) -> bool:
    """True when the definition's header (all but its body) holds a syntax error."""
    body = node.child_by_field_name("body")
    for child in node.children:
        if child == body:
            break
        if child.has_error or child.is_missing:
            return True
    return False


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _header_text(node: ts.Node, lines: list[str]) -> str:
    """The lines from a definition's start to its body's start (its whole signature)."""
    body = node.child_by_field_name("body")
    last = body.start_point.row if body is not None and body.start_point.row > node.start_point.row else None
    end = node.start_point.row + 1 if last is None else last
    return "\n".join(lines[node.start_point.row : max(end, node.start_point.row + 1)])


def _function_definition(
    node: ts.Node, qname: str, name: str, in_class: bool, lang: str, lines: list[str]
) -> Definition:
    params = _params(node.child_by_field_name("parameters"), lang)
    if in_class and params and params[0].name in RECEIVERS and not _is_static(node):
        params = params[1:]
    kind = "method" if in_class else "function"
    header = _header_text(node, lines)
    return Definition(qname, name, kind, node.start_point.row + 1, node.end_point.row + 1, header, params)


def _is_static(node: ts.Node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any("staticmethod" in _text(d) for d in parent.children if d.type == "decorator")


def _class_definition(node: ts.Node, qname: str, name: str, lang: str, lines: list[str]) -> Definition:
    """A class: its constructor's parameters (an __init__'s, else its annotated fields) and its attributes."""
    body = node.child_by_field_name("body")
    fields: list[Param] = []
    attributes: list[str] = []
    init: ts.Node | None = None
    for child in body.named_children if body is not None else []:
        target = (
            child.named_children[0]
            if child.type == "decorated_definition" and child.named_children
            else child
        )
        target = target.child_by_field_name("definition") or target
        if target.type == "function_definition":
            if _text(target.child_by_field_name("name") or target) == "__init__":
                init = target
            attributes.extend(a for a in _self_attributes(target) if a not in attributes)
        elif child.type == "expression_statement" and child.named_children:
            assign = child.named_children[0]
            left = assign.child_by_field_name("left")
            if assign.type == "assignment" and left is not None and left.type == "identifier":
                attributes.append(_text(left))
                if assign.child_by_field_name("type") is not None and not _is_class_var(assign):
                    fields.append(
                        Param(_text(left), "positional", assign.child_by_field_name("right") is not None)
                    )
    params: tuple[Param, ...] = tuple(fields)
    header_lines = [_header_text(node, lines)]
    if init is not None:
        params = _params(init.child_by_field_name("parameters"), lang)[1:]
        header_lines.append(_header_text(init, lines))
    elif body is not None:
        field_rows = sorted({row for row in range(body.start_point.row, body.end_point.row + 1)})
        header_lines += [lines[r] for r in field_rows if _field_line(lines[r], fields)]
    deduped = tuple(dict.fromkeys(attributes))
    header = "\n".join(header_lines)
    return Definition(
        qname, name, "class", node.start_point.row + 1, node.end_point.row + 1, header, params, deduped
    )


def _field_line(line: str, fields: list[Param]) -> bool:
    stripped = line.strip()
    return any(stripped.startswith(f"{f.name}:") for f in fields)


def _is_class_var(assign: ts.Node) -> bool:
    kind = assign.child_by_field_name("type")
    return kind is not None and "ClassVar" in _text(kind)


def _self_attributes(function: ts.Node) -> list[str]:
    """The names a method assigns as self.X, in order."""
    found: list[str] = []
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.type in ("assignment", "augmented_assignment"):
            left = node.child_by_field_name("left")
            if left is not None and left.type == "attribute":
                obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
                if obj is not None and attr is not None and _text(obj) == "self" and _text(attr) not in found:
                    found.append(_text(attr))
        if node.type not in ("function_definition", "class_definition"):
            stack.extend(reversed(node.named_children))
    return found


def _params(node: ts.Node | None, lang: str) -> tuple[Param, ...]:
    """The parameters of a parameter list (Python exactly; other languages by their names)."""
    if node is None:
        return ()
    out: list[Param] = []
    keyword_only = False
    for child in node.named_children:
        kind = child.type
        if kind == "comment":
            continue
        if kind == "positional_separator":
            out = [Param(p.name, "positional_only", p.has_default) for p in out]
            continue
        if kind == "keyword_separator":
            keyword_only = True
            continue
        name = _param_name(child)
        if name is None:
            continue
        if (
            kind in ("list_splat_pattern", "rest_parameter", "variadic_parameter")
            or "splat" in kind
            and "dict" not in kind
        ):
            out.append(Param(name, "var_positional", True))
            keyword_only = True
            continue
        if kind == "dictionary_splat_pattern":
            out.append(Param(name, "var_keyword", True))
            continue
        has_default = (
            "default" in kind or "optional" in kind or child.child_by_field_name("value") is not None
        )
        out.append(Param(name, "keyword" if keyword_only else "positional", has_default))
    return tuple(out)


def _param_name(node: ts.Node) -> str | None:
    """A parameter's name: its `name` or `pattern` field, else its first identifier."""
    for field_name in ("name", "pattern"):
        named = node.child_by_field_name(field_name)
        if named is not None and "identifier" in named.type:
            return _text(named)
    if "identifier" in node.type:
        return _text(node)
    for child in node.named_children:
        if "identifier" in child.type:
            return _text(child)
    return None


# ----- what changed -------------------------------------------------------------------------------------------


def diff_definitions(before: dict[str, Definition], after: dict[str, Definition]) -> list[DefinitionChange]:
    """The changes call sites or attribute uses must follow, for definitions present before and after."""
    changes: list[DefinitionChange] = []
    for qname, new in after.items():
        old = before.get(qname)
        if old is None or old.kind != new.kind:
            continue
        call = _call_change(old, new)
        if call is not None:
            changes.append(call)
        if new.kind == "class":
            changes.extend(_attribute_changes(old, new))
    return changes


def _call_change(old: Definition, new: Definition) -> DefinitionChange | None:
    """How the way to call a definition changed (None when every existing call still fits)."""
    if old.params == new.params or (new.kind == "method" and new.name == "__init__"):
        return None  # an __init__'s callers are its class's constructions: the class's own change
    before = [p.name for p in old.params]
    after = [p.name for p in new.params]
    renamed: list[tuple[str, str]] = []
    if len(before) == len(after):
        for a, b in zip(before, after, strict=True):
            if a != b and a not in after and b not in before:
                renamed.append((a, b))
    renamed_old = {a for a, _ in renamed}
    renamed_new = {b for _, b in renamed}
    removed = tuple(n for n in before if n not in after and n not in renamed_old)
    added = tuple(n for n in after if n not in before and n not in renamed_new)
    common_before = [renamed_map(n, renamed) for n in before if n not in removed]
    common_after = [n for n in after if n not in added]
    old_by_name = {renamed_map(p.name, renamed): p for p in old.params}
    new_by_name = {p.name: p for p in new.params}
    positional = ("positional", "positional_only")
    both = [
        n for n in common_before if old_by_name[n].kind in positional and new_by_name[n].kind in positional
    ]
    reordered = both != [n for n in common_after if n in both]
    now_keyword = tuple(
        n for n in common_after if old_by_name[n].kind in positional and new_by_name[n].kind == "keyword"
    )
    now_required = tuple(
        p.name
        for p in new.params
        if not p.has_default
        and p.kind not in VAR_KINDS
        and (p.name in added or (p.name in old_by_name and old_by_name[p.name].has_default))
    )
    if not (renamed or removed or reordered or now_required or now_keyword):
        return None  # only optional parameters added, defaults changed or annotations edited
    return DefinitionChange(
        old, new, "call", new.name, added, removed, tuple(renamed), reordered, now_required, now_keyword
    )


def renamed_map(name: str, renamed: list[tuple[str, str]]) -> str:
    """A name as it is called after the renames."""
    return next((b for a, b in renamed if a == name), name)


def _attribute_changes(old: Definition, new: Definition) -> list[DefinitionChange]:
    """One attribute renamed in place: the same position among the class's attributes, a new name."""
    gone = [a for a in old.attributes if a not in new.attributes]
    came = [a for a in new.attributes if a not in old.attributes]
    if len(gone) != 1 or len(came) != 1 or len(old.attributes) != len(new.attributes):
        return []
    if old.attributes.index(gone[0]) != new.attributes.index(came[0]) or gone[0].startswith("__"):
        return []
    return [DefinitionChange(old, new, "attribute", gone[0], renamed=((gone[0], came[0]),))]
