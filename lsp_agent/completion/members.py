"""The member sets the workspace vouches for as complete, for monitor-guided decoding (Python).

`self.`/`cls.` inside a method may name what its class and its bases define (methods, nested classes, class
attributes, `self.x = ...` anywhere in them) when every base is the workspace's own (or a builtin type, `ABC`,
`Generic`, `Protocol`); `mod.` may name an imported workspace module's top-level names (and a package's
submodules). Wherever the set may be incomplete the receiver is left out: an external or unresolved base, a
metaclass, a class decorator not known to add nothing, `__getattr__`, `setattr`, `__dict__`, `globals()`, a star
import. Modules are found among the index's files; only the files along the way are parsed (tree-sitter). A
secret file (`Workspace.is_secret`) is never read, and a module, class or package member that resolves to one
leaves the receiver out, so none of its names, nor that it exists, can reach a grammar.
"""

from __future__ import annotations

import abc
import builtins
import logging
import sqlite3
import typing
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.index.languages import parser_for
from lsp_agent.workspace.secrets import secret_files

log = logging.getLogger(__name__)

Members = frozenset[str]
BUILTIN_BASES: dict[str, Members] = {
    name: frozenset(dir(value)) for name, value in vars(builtins).items() if isinstance(value, type)
}
TYPING_BASES: dict[str, Members] = {
    "ABC": frozenset(dir(abc.ABC)),
    "Generic": frozenset(dir(typing.Generic)),
    "Protocol": frozenset(dir(typing.Protocol)),
}
TYPING_MODULES = ("abc", "typing", "typing_extensions")
# class decorators that add no attribute a suggestion would write (dataclass fields are the class's annotations)
PLAIN_DECORATORS = frozenset(
    {"dataclass", "total_ordering", "final", "s", "attrs", "define", "frozen", "mutable", "runtime_checkable"}
)
DYNAMIC_CLASS = (b"setattr(", b"__getattr__", b"__getattribute__", b"__dict__", b"vars(self")
DYNAMIC_MODULE = (b"def __getattr__", b"globals()", b"sys.modules[", b"setattr(")
TARGETS = ("assignment", "augmented_assignment", "for_statement", "for_in_clause", "as_pattern")
PATTERNS = ("pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "parenthesized_expression")
MAX_DEPTH = 8  # bases and re-exports followed this deep
PARSED_FILES = 64


@dataclass
class Workspace:
    """What member sets are read from: the index's file list (`db_path`), file lines, the workspace's name, and
    which files are secret (the built-in rules unless given: pass the user's `secretFiles` rules)."""

    db_path: Any
    read_lines: Callable[[str], list[str]]
    root_name: str = ""
    is_secret: Callable[[str], bool] = field(default_factory=lambda: secret_files().is_secret)


_parsed: OrderedDict[tuple[str, int], Any] = OrderedDict()


def parse(rel: str, source: bytes) -> Any:
    """A Python file's tree (the last PARSED_FILES kept by path and text)."""
    key = (rel, hash(source))
    tree = _parsed.get(key)
    if tree is None:
        parser = parser_for("python")
        if parser is None:
            return None
        tree = _parsed[key] = parser.parse(source)
        while len(_parsed) > PARSED_FILES:
            _parsed.popitem(last=False)
    return tree


def text(node: Any) -> str:
    """A node's source text."""
    return node.text.decode("utf-8", "replace")


def definition(node: Any) -> Any:
    """The function or class a (decorated) definition defines."""
    return node.child_by_field_name("definition") if node.type == "decorated_definition" else node


def target_names(node: Any, attribute_of: tuple[str, ...] = ()) -> list[str]:
    """The names an assignment's target binds: identifiers, or with `attribute_of`, the `x` of `self.x`."""
    if node.type == "identifier" and not attribute_of:
        return [text(node)]
    if node.type == "attribute" and attribute_of:
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        return [text(attr)] if obj is not None and attr is not None and text(obj) in attribute_of else []
    if node.type in PATTERNS:
        return [n for child in node.named_children for n in target_names(child, attribute_of)]
    return []


def bound_targets(node: Any) -> Any:
    """The target node of an assignment-like node (None for others)."""
    if node.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return node.child_by_field_name("left")
    if node.type == "as_pattern":
        return node.child_by_field_name("alias")
    return None


def class_node(tree: Any, name: str) -> Any:
    """The top-level class of that name in a module's tree (None when it has none)."""
    for child in tree.root_node.named_children:
        node = definition(child)
        if (
            node is not None
            and node.type == "class_definition"
            and text(node.child_by_field_name("name")) == name
        ):
            return node
    return None


class MemberSets:
    """Complete member sets of classes and modules of one workspace (use in one worker thread at a time)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._conn: sqlite3.Connection | None = None
        self._modules: dict[str, Members | None] = {}

    def close(self) -> None:
        """Close the index connection."""
        if self._conn is not None:
            self._conn.close()

    def _paths(self, candidates: list[str], patterns: tuple[str, ...] = ()) -> list[str]:
        """The indexed files among `candidates`, else those matching a LIKE pattern (at most 3)."""
        if self._conn is None:
            self._conn = sqlite3.connect(f"file:{self.workspace.db_path}?mode=ro", uri=True, timeout=0.2)
        marks = ",".join("?" * len(candidates))
        found = [
            r[0] for r in self._conn.execute(f"SELECT path FROM files WHERE path IN ({marks})", candidates)
        ]
        for pattern in patterns if not found else ():
            found += self._like(f"%/{pattern}", 3)
        return found

    def _like(self, pattern: str, limit: int = -1) -> list[str]:
        """The indexed files whose path is `pattern` with `%` as the only wildcard."""
        assert self._conn is not None
        escaped = pattern.replace("\\", "\\\\").replace("_", "\\_")
        query = "SELECT path FROM files WHERE path LIKE ? ESCAPE '\\' LIMIT ?"
        return [r[0] for r in self._conn.execute(query, (escaped, limit))]

    def module_path(self, dotted: str, level: int, importer: str) -> str | None:
        """The workspace file of a module imported from `importer` (`level`: the leading dots), or None."""
        parts = [p for p in dotted.split(".") if p]
        if level:
            folder = importer.split("/")[:-1]
            if level - 1 > len(folder):
                return None
            stem = "/".join(folder[: len(folder) - (level - 1)] + parts)
            found = self._paths([f"{stem}.py", f"{stem}/__init__.py"] if parts else [f"{stem}/__init__.py"])
            return self._one(found)
        if not parts:
            return None
        stem = "/".join(parts)
        found = self._paths([f"{stem}.py", f"{stem}/__init__.py"], (f"{stem}.py", f"{stem}/__init__.py"))
        if not found and parts[0] == self.workspace.root_name:  # the workspace is the package itself
            rest = "/".join(parts[1:])
            found = self._paths([f"{rest}.py", f"{rest}/__init__.py"] if rest else ["__init__.py"])
        return self._one(found)

    def _one(self, found: list[str]) -> str | None:
        """The one module file found; None when there are several or one is secret (its names stay unknown)."""
        return found[0] if len(found) == 1 and not self.workspace.is_secret(found[0]) else None

    def source(self, rel: str) -> bytes | None:
        """A workspace file's text as bytes (its open buffer, else the disk); None when it cannot be read or is
        secret."""
        if self.workspace.is_secret(rel):
            return None
        lines = self.workspace.read_lines(rel)
        return "\n".join(lines).encode("utf-8", "surrogatepass") if lines else None

    # ----- modules -------------------------------------------------------------------------------------------

    def module_members(self, rel: str) -> Members | None:
        """The top-level names of a workspace module (and a package's submodules); None when not vouched for."""
        if rel not in self._modules:
            self._modules[rel] = None  # a module importing itself in a cycle is not vouched for meanwhile
            self._modules[rel] = self._read_module(rel)
        return self._modules[rel]

    def _read_module(self, rel: str) -> Members | None:
        source = self.source(rel)
        if source is None or any(marker in source for marker in DYNAMIC_MODULE):
            return None
        tree = parse(rel, source)
        if tree is None:
            return None
        names = top_level_names(tree.root_node)
        if names is None:
            return None
        if rel.endswith("__init__.py"):
            folder = rel.removesuffix("__init__.py")
            self._paths([])  # connects
            submodules = {
                p: p[len(folder) :].split("/")[0].removesuffix(".py") for p in self._like(f"{folder}%")
            }
            shown = {name for p, name in submodules.items() if not self.workspace.is_secret(p)}
            if shown != set(submodules.values()):
                return None  # a submodule only secret files make: the set is incomplete without naming it
            names |= shown
        return frozenset(names)

    def imported_modules(self, tree: Any, rel: str, wanted: set[str] | None = None) -> dict[str, str]:
        """The names a module's top-level imports bind to workspace modules: {name: module's path} (only the names
        in `wanted`, when given)."""
        found: dict[str, str] = {}
        for node in tree.root_node.named_children:
            for name, dotted, level in imports_of(node):
                if wanted is not None and name not in wanted:
                    continue
                path = self.module_path(dotted, level, rel)
                if path is not None:
                    found[name] = path
        return found

    # ----- classes -------------------------------------------------------------------------------------------

    def class_members(self, node: Any, rel: str, tree: Any, depth: int = 0) -> Members | None:
        """What instances of a class defined in `rel` may name; None when not vouched for."""
        if depth > MAX_DEPTH or any(marker in node.text for marker in DYNAMIC_CLASS):
            return None
        if node.parent is not None and node.parent.type == "decorated_definition":
            for decorator in node.parent.named_children[:-1]:
                call = decorator.named_children[0] if decorator.named_children else None
                if call is not None and call.type == "call":
                    call = call.child_by_field_name("function")
                if call is None or text(call).rsplit(".", 1)[-1] not in PLAIN_DECORATORS:
                    return None
        members = own_members(node)
        bases = node.child_by_field_name("superclasses")
        for base in bases.named_children if bases is not None else []:
            if base.type == "keyword_argument":
                return None  # a metaclass (or __init_subclass__ arguments) may add anything
            inherited = self.base_members(base, rel, tree, depth + 1)
            if inherited is None:
                return None
            members |= inherited
        return frozenset(members)

    def base_members(self, base: Any, rel: str, tree: Any, depth: int) -> Members | None:
        """The members a base class expression brings, resolved in the module `rel` (with its `tree`)."""
        if base.type == "subscript":  # Generic[T], Base[T]
            base = base.child_by_field_name("value")
        if base is None or base.type not in ("identifier", "attribute"):
            return None
        written = text(base)
        if "." in written:
            receiver, name = written.rsplit(".", 1)
            if receiver in TYPING_MODULES and name in TYPING_BASES:
                return TYPING_BASES[name]
            path = self.imported_modules(tree, rel).get(receiver)
            return self.class_in_module(path, name, depth) if path else None
        local = class_node(tree, written)
        if local is not None:
            return self.class_members(local, rel, tree, depth)
        for node in tree.root_node.named_children:
            for name, dotted, level in imports_of(node, from_names=True):
                if name != written:
                    continue
                module, _, original = dotted.rpartition(".")
                if module in TYPING_MODULES and original in TYPING_BASES:
                    return TYPING_BASES[original]
                path = self.module_path(module, level, rel)
                return self.class_in_module(path, original, depth) if path else None
        return BUILTIN_BASES.get(written)

    def class_in_module(self, rel: str, name: str, depth: int) -> Members | None:
        """The members of the class `name` a workspace module defines or imports (re-exports)."""
        if depth > MAX_DEPTH:
            return None
        source = self.source(rel)
        tree = parse(rel, source) if source is not None else None
        if tree is None:
            return None
        node = class_node(tree, name)
        if node is not None:
            return self.class_members(node, rel, tree, depth)
        for child in tree.root_node.named_children:
            for bound, dotted, level in imports_of(child, from_names=True):
                if bound == name:
                    module, _, original = dotted.rpartition(".")
                    path = self.module_path(module, level, rel)
                    return self.class_in_module(path, original, depth + 1) if path else None
        return None


def own_members(node: Any) -> set[str]:
    """What a class's own body defines: methods, nested classes, class attributes, `self.x`/`cls.x` targets."""
    members: set[str] = set()
    body = node.child_by_field_name("body")
    for child in body.named_children if body is not None else []:
        inner = definition(child)
        if inner is not None and inner.type in ("function_definition", "class_definition"):
            members.add(text(inner.child_by_field_name("name")))
        elif child.type == "expression_statement" and child.named_children:
            target = bound_targets(child.named_children[0])
            members.update(target_names(target) if target is not None else [])
    stack = [body] if body is not None else []
    while stack:
        current = stack.pop()
        target = bound_targets(current)
        if target is not None:
            members.update(target_names(target, ("self", "cls")))
        stack.extend(c for c in current.named_children if c.type != "class_definition")
    return members


def top_level_names(root: Any) -> set[str] | None:
    """The names a module binds at its top level (through if/try/with/for blocks too); None with a star import."""
    names: set[str] = set()
    stack = list(root.named_children)
    while stack:
        node = stack.pop()
        if node.type == "import_from_statement" and any(c.type == "wildcard_import" for c in node.children):
            return None
        inner = definition(node)
        if inner is not None and inner.type in ("function_definition", "class_definition"):
            names.add(text(inner.child_by_field_name("name")))
            globals_ = [n for n in _descendants(inner) if n.type == "global_statement"]
            names.update(text(i) for g in globals_ for i in g.named_children if i.type == "identifier")
            continue
        names.update(name for name, _, _ in imports_of(node, from_names=True))
        target = bound_targets(node.named_children[0]) if node.type == "expression_statement" else None
        target = target if target is not None else bound_targets(node)
        if target is not None:
            names.update(target_names(target))
        if node.type in (
            "if_statement",
            "try_statement",
            "with_statement",
            "for_statement",
            "while_statement",
        ):
            stack.extend(node.named_children)
        elif node.type in ("block", "else_clause", "elif_clause", "except_clause", "finally_clause"):
            stack.extend(node.named_children)
        elif node.type == "with_clause" or node.type == "with_item":
            stack.extend(node.named_children)
    return names


def _descendants(node: Any) -> list[Any]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(current.named_children)
    return out


def imports_of(node: Any, from_names: bool = False) -> list[tuple[str, str, int]]:
    """(bound name, dotted module, level) of an import statement's modules; with `from_names`, every name it
    binds (`from m import x` gives ("x", "m.x", 0), whether x is a module or not)."""
    out: list[tuple[str, str, int]] = []
    if node.type == "import_statement":
        for item in node.named_children:
            if item.type == "aliased_import":
                out.append(
                    (text(item.child_by_field_name("alias")), text(item.child_by_field_name("name")), 0)
                )
            elif item.type == "dotted_name":
                dotted = text(item)
                out.append((dotted.split(".")[0], dotted if from_names else dotted.split(".")[0], 0))
    elif node.type == "import_from_statement":
        module = node.child_by_field_name("module_name")
        written = text(module) if module is not None else ""
        level = len(written) - len(written.lstrip("."))
        base = written.lstrip(".")
        for item in node.children_by_field_name("name"):
            if item.type == "aliased_import":
                name, alias = text(item.child_by_field_name("name")), text(item.child_by_field_name("alias"))
            else:
                name = alias = text(item)
            out.append((alias, f"{base}.{name}" if base else name, level))
    return out
