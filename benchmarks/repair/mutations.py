"""One-line bug injection with the `ast` module: candidate sites inside functions, each a minimal text edit.

Kinds (each edit changes exactly one line, so the fix is one line too):
  swapped_operator    a + b -> a - b, * <-> /, // -> /, += <-> -=, and <-> or
  swapped_comparison  < <-> <=, > <-> >=, == <-> !=, in <-> not in, is <-> is not
  off_by_one          an integer literal n -> n + 1 or n - 1 (in comparisons, indexes, slices, arithmetic, calls)
  wrong_variable      a local name read -> another local of the same function defined before that line
  dropped_negation    not x -> x
  wrong_default       a parameter's default True <-> False, or n -> n + 1
  dropped_condition   if a or b: -> if a: (a missing base or edge case: the guard loses one of its checks)
Column offsets from `ast` are UTF-8 byte offsets, so lines are edited as bytes.
"""

from __future__ import annotations

import ast
import io
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = (
    "swapped_operator",
    "swapped_comparison",
    "off_by_one",
    "wrong_variable",
    "dropped_negation",
    "wrong_default",
    "dropped_condition",
)
BINOP_SWAPS: dict[type, tuple[str, str]] = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"),
}
AUGOP_SWAPS: dict[type, tuple[str, str]] = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+=")}
COMPARE_SWAPS: dict[type, tuple[str, str]] = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
}
BOOL_SWAPS: dict[type, tuple[str, str]] = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
NEARBY_NAMES = 3  # wrong_variable: how many other locals (nearest definitions first) a site may swap in
SKIPPED_NAMES = {"self", "cls"}


@dataclass(frozen=True)
class Mutation:
    """One injected bug: `original` line `line` of `path` becomes `mutated`. Bugs of several lines (multiline.py)
    write `original` as the lines from `line` on, joined by newlines, and `mutated` as the lines they become ('' for
    lines removed: a missing statement)."""

    path: str
    line: int
    kind: str
    function: str
    original: str
    mutated: str

    def apply(self, source: str) -> str:
        """`source` with this mutation's line replaced (the line must still read `original`)."""
        lines = io.StringIO(source, newline="").readlines()  # the line breaks `ast` counts, kept as they are
        span = self.original.split("\n")
        current = lines[self.line - 1 : self.line - 1 + len(span)]
        bodies = [line.rstrip("\r\n") for line in current]
        if bodies != span:
            raise ValueError(f"{self.path}:{self.line} no longer reads {self.original!r}")
        ending = current[0][len(bodies[0]) :] or "\n"
        new = [text + ending for text in self.mutated.split("\n")] if self.mutated else []
        if new and len(new) == len(current):  # a line's own line break stays (the last may have none)
            new = [
                text + line[len(body) :]
                for text, line, body in zip(self.mutated.split("\n"), current, bodies, strict=True)
            ]
        lines[self.line - 1 : self.line - 1 + len(span)] = new
        return "".join(lines)


@dataclass(frozen=True)
class _Edit:
    """Replace bytes [start, end) of one line with `text`."""

    line: int
    start: int
    end: int
    text: str
    kind: str


def find_mutations(
    source: str, path: str, lines: set[int] | None = None, *, check: bool = True
) -> list[Mutation]:
    """Every one-line mutation inside the functions of `source`, on `lines` if given, in source order.

    With `check`, only those whose module still parses and means something else (see `is_valid`); without,
    the caller checks the few it picks (checking every candidate of a large module takes a minute).
    """
    tree = ast.parse(source)
    raw = source.encode("utf-8").splitlines()
    found: dict[tuple[int, str], Mutation] = {}
    for qualname, func in _functions(tree):
        for edit in _edits_in_function(func, raw):
            if lines is not None and edit.line not in lines and edit.kind != "wrong_default":
                continue
            if edit.kind == "wrong_default" and lines is not None and not _body_lines(func) & lines:
                continue
            mutation = _realise(edit, raw, path, qualname)
            if mutation is not None:
                found.setdefault((mutation.line, mutation.mutated), mutation)
    result = sorted(found.values(), key=lambda m: (m.line, m.kind, m.mutated))
    if check:
        reference = ast.dump(tree)
        result = [m for m in result if is_valid(m, source, reference)]
    return result


def is_valid(mutation: Mutation, source: str, reference: str | None = None) -> bool:
    """True when the mutated module parses and its AST differs from the original's (`reference`: its dump)."""
    try:
        changed = ast.parse(mutation.apply(source))
    except (SyntaxError, ValueError):
        return False
    return ast.dump(changed) != (reference if reference is not None else ast.dump(ast.parse(source)))


def find_mutations_in_file(
    root: Path, rel: str, lines: set[int] | None = None, *, check: bool = True
) -> list[Mutation]:
    """`find_mutations` for the file `rel` under `root`."""
    return find_mutations((root / rel).read_text(encoding="utf-8"), rel, lines, check=check)


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function and method, nested ones included."""
    result = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            result.append((name, node))
            result += _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            result += _functions(node, f"{prefix}{node.name}.")
        else:
            result += _functions(node, prefix)
    return result


def _body_lines(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Line numbers of the function's body statements."""
    return {n.lineno for stmt in func.body for n in ast.walk(stmt) if isinstance(n, ast.stmt)}


def _own_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """Nodes of the body, without nested functions/classes, docstrings, f-strings or annotations."""
    nodes: list[ast.AST] = []
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.JoinedStr
        ):
            continue
        nodes.append(node)
        for field, value in reversed(list(ast.iter_fields(node))):
            if field in ("annotation", "returns", "type_comment"):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(c for c in reversed(children) if isinstance(c, ast.AST))
    return nodes


def _one_line(node: ast.AST) -> bool:
    """True when the node starts and ends on the same line."""
    return getattr(node, "lineno", None) is not None and node.lineno == node.end_lineno


def _edits_in_function(func: ast.FunctionDef | ast.AsyncFunctionDef, raw: list[bytes]) -> list[_Edit]:
    """All candidate edits of one function."""
    nodes = _own_nodes(func)
    edits: list[_Edit] = []
    for node in nodes:
        if isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAPS and not _is_text(node):
            edits += _between(raw, node.left, node.right, BINOP_SWAPS[type(node.op)], "swapped_operator")
        elif isinstance(node, ast.AugAssign) and type(node.op) in AUGOP_SWAPS:
            edits += _between(raw, node.target, node.value, AUGOP_SWAPS[type(node.op)], "swapped_operator")
        elif isinstance(node, ast.BoolOp):
            edits += _between(
                raw, node.values[0], node.values[1], BOOL_SWAPS[type(node.op)], "swapped_operator"
            )
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                edits += _between(raw, left, right, COMPARE_SWAPS[type(op)], "swapped_comparison")
                left = right
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _one_line(node):
            edits += _dropped_negation(node, raw)
        if isinstance(node, ast.If | ast.While) and isinstance(node.test, ast.BoolOp):
            edits += _dropped_conditions(node.test)
    edits += _off_by_one(nodes, raw)
    edits += _wrong_variables(func, nodes)
    edits += _wrong_defaults(func, raw)
    return edits


def _is_text(node: ast.BinOp) -> bool:
    """True for string concatenation or formatting, where swapping + only raises a TypeError."""
    sides = (node.left, node.right)
    return any(
        isinstance(s, ast.JoinedStr) or (isinstance(s, ast.Constant) and isinstance(s.value, str | bytes))
        for s in sides
    )


def _between(
    raw: list[bytes], left: ast.AST, right: ast.AST, swap: tuple[str, str], kind: str
) -> list[_Edit]:
    """Swap the operator written between two operands on one line (parentheses around them allowed)."""
    if not (_one_line(left) and _one_line(right) and left.end_lineno == right.lineno):
        return []
    line = raw[left.end_lineno - 1]
    segment = line[left.end_col_offset : right.col_offset].decode("utf-8", "replace")
    old, new = swap
    pattern = r"^[\s()]*(" + r"\s+".join(map(re.escape, old.split())) + r")[\s()]*$"
    match = re.match(pattern, segment)
    if match is None:
        return []
    start = left.end_col_offset + len(segment[: match.start(1)].encode())
    end = left.end_col_offset + len(segment[: match.end(1)].encode())
    return [_Edit(left.end_lineno, start, end, new, kind)]


def _dropped_negation(node: ast.UnaryOp, raw: list[bytes]) -> list[_Edit]:
    """`not x` -> `x` (an opening parenthesis after `not` stays)."""
    segment = raw[node.lineno - 1][node.col_offset : node.operand.col_offset].decode("utf-8", "replace")
    kept = re.sub(r"^not\s*", "", segment)
    return [_Edit(node.lineno, node.col_offset, node.operand.col_offset, kept, "dropped_negation")]


def _dropped_conditions(test: ast.BoolOp) -> list[_Edit]:
    """Drop the first or the last operand of a one-line `if`/`while` condition."""
    if not _one_line(test) or len(test.values) < 2:
        return []
    first, second, last = test.values[0], test.values[1], test.values[-1]
    before_last = test.values[-2]
    return [
        _Edit(test.lineno, first.col_offset, second.col_offset, "", "dropped_condition"),
        _Edit(test.lineno, before_last.end_col_offset, last.end_col_offset, "", "dropped_condition"),
    ]


def _off_by_one(nodes: list[ast.AST], raw: list[bytes]) -> list[_Edit]:
    """Integer literals used as bounds, indexes or operands, written in decimal: n -> n + 1, n - 1."""
    edits = []
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    for node in nodes:
        if not (isinstance(node, ast.Constant) and type(node.value) is int and _one_line(node)):
            continue
        parent = parents.get(id(node))
        if not isinstance(parent, ast.Compare | ast.BinOp | ast.Subscript | ast.Slice | ast.Call):
            continue
        text = raw[node.lineno - 1][node.col_offset : node.end_col_offset]
        if not text.isdigit():
            continue
        for value in (node.value + 1, node.value - 1):
            if value >= 0:
                edits.append(
                    _Edit(node.lineno, node.col_offset, node.end_col_offset, str(value), "off_by_one")
                )
    return edits


def _wrong_variables(func: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> list[_Edit]:
    """A local read replaced by another local (a parameter, or a name assigned on an earlier line)."""
    defined: dict[str, int] = {}
    for arg in func.args.posonlyargs + func.args.args + func.args.kwonlyargs:
        defined.setdefault(arg.arg, func.lineno)
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.setdefault(node.id, node.lineno)
    edits = []
    for node in nodes:
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or node.id not in defined:
            continue
        if node.id in SKIPPED_NAMES:
            continue
        others = [
            (abs(node.lineno - line), name)
            for name, line in defined.items()
            if name != node.id and line < node.lineno and name not in SKIPPED_NAMES
        ]
        for _, name in sorted(others)[:NEARBY_NAMES]:
            edits.append(_Edit(node.lineno, node.col_offset, node.end_col_offset, name, "wrong_variable"))
    return edits


def _wrong_defaults(func: ast.FunctionDef | ast.AsyncFunctionDef, raw: list[bytes]) -> list[_Edit]:
    """A parameter default flipped (True <-> False) or moved by one (n -> n + 1)."""
    edits = []
    for default in [*func.args.defaults, *(d for d in func.args.kw_defaults if d is not None)]:
        if not (isinstance(default, ast.Constant) and _one_line(default)):
            continue
        text = raw[default.lineno - 1][default.col_offset : default.end_col_offset]
        if default.value is True or default.value is False:
            new = "False" if default.value else "True"
        elif type(default.value) is int and text.isdigit():
            new = str(default.value + 1)
        else:
            continue
        edits.append(_Edit(default.lineno, default.col_offset, default.end_col_offset, new, "wrong_default"))
    return edits


def _realise(edit: _Edit, raw: list[bytes], path: str, function: str) -> Mutation | None:
    """The Mutation for an edit (None when the line would not change)."""
    line = raw[edit.line - 1]
    new_line = line[: edit.start] + edit.text.encode() + line[edit.end :]
    if new_line == line:
        return None
    original = line.decode("utf-8").rstrip("\r")
    mutated = new_line.decode("utf-8").rstrip("\r")
    return Mutation(path, edit.line, edit.kind, function, original, mutated)
