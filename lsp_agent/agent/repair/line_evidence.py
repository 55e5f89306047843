"""What the code itself shows is missing or misread, before any line is filled in (line repairs' first requests,
agent/repair/line_schedule.py). Each function returns lines: where a line is inserted (1-based gaps, as
line_insertions' are) or, for a misread value, the lines to fill in.

- an empty promise: a function with nothing but its docstring that says it returns a value (a return annotation
  other than None, or a Returns section): its statement is missing, whoever calls it;
- a dropped value: a local built (assigned, then maybe its attributes or items set) that nothing reads afterwards,
  as when the `return` of an object built at the end of a `try` body is missing;
- an unbalanced counter: an attribute a class only ever decreases (or only increases), whose change in the method
  paired with the one that has it (`__enter__` for `__exit__`, `acquire` for `release`, ...) is missing;
- a guard where a None was formatted into text: the start of the function of a line that formats values into text,
  when the failure shows a None inside a string (`'complement(None)'`, `'5None'`);
- a mixed return: a function that returns a value on some paths and falls off its end on another (returning None
  there by omission), as when the final `return` after an early `return self` is missing;
- a misread value: of two values unpacked together (`a, b = ...`), one is never read while the other is, so a
  line reading the other may have meant it (a copied line left unchanged)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from lsp_agent.agent.repair.line_insertions import function_at, is_docstring, returnless_gaps
from lsp_agent.workspace.python_parse import parse_python

PAIRED_METHODS = {  # a method -> the one that undoes it (both ways)
    "__enter__": "__exit__",
    "__aenter__": "__aexit__",
    "acquire": "release",
    "open": "close",
    "push": "pop",
    "start": "stop",
    "begin": "end",
    "enter": "exit",
    "lock": "unlock",
    "increment": "decrement",
    "incr": "decr",
    "inc": "dec",
}
PAIRED_METHODS.update({after: before for before, after in list(PAIRED_METHODS.items())})
_RETURNS_SECTION = re.compile(
    r"^\s*(?:Returns?\s*:?\s*$|:returns?:|:rtype:|@return)", re.MULTILINE | re.IGNORECASE
)
_NO_VALUE = {"None", "NoReturn", "Never"}
_ABSTRACT = {"abstractmethod", "overload", "abstractproperty"}
_LATER = 10**9  # the line a read inside a nested function counts at (after everything)
_FORMATTED_NONE = re.compile(r"""(['"])[^'"\n]*?\bNone(?!\w)[^'"\n]*?\1|\wNone(?!\w)""")


def empty_promises(text: str) -> list[int]:
    """The last lines of the functions with nothing but their docstring that say they return a value (a return
    annotation other than None, or a Returns section in the docstring), not abstract ones or a Protocol's."""
    tree = _parsed(text)
    if tree is None:
        return []
    protocols = {
        id(node)
        for owner in ast.walk(tree)
        if isinstance(owner, ast.ClassDef)
        and any(_named(base) in {"Protocol", "ABC"} for base in owner.bases)
        for node in owner.body
    }
    found = [
        node.end_lineno or node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and id(node) not in protocols
        and len(node.body) == 1
        and is_docstring(node.body[0])
        and not any(_named(decorator) in _ABSTRACT for decorator in node.decorator_list)
        and _promises_value(node)
    ]
    return sorted(found)


def _promises_value(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function's annotation or docstring says it returns a value."""
    if function.returns is not None:
        return _named(function.returns) not in _NO_VALUE and not (
            isinstance(function.returns, ast.Constant) and function.returns.value in (None, "None")
        )
    return bool(_RETURNS_SECTION.search(ast.get_docstring(function) or ""))


def dropped_values(text: str, number: int) -> list[int]:
    """The gaps after the values line `number`'s function builds and never reads: for each local assigned by
    `name = ...` whose last store (`name = ...`, `name.attr = ...`, `name[k] = ...`, `name += ...`) no read
    follows (nor precedes it in a loop around it), the end of the block that store is in (before the block's
    closing `return`, `raise`, `break` or `continue`)."""
    function = function_at(text, number)
    if function is None:
        return []
    stores: dict[str, list[_Store]] = {}
    _collect_stores(function.body, [], stores)
    reads = _reads(function)
    shared = {
        n for node in ast.walk(function) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names
    }
    gaps = []
    for name, found in stores.items():
        if name in shared or name == "_" or not any(store.assigned for store in found):
            continue
        if any(store.aliased for store in found) and not all(store.assigned for store in found):
            # `data = self.data` then `data[k] = v`: the stores change an object something else holds
            continue
        last = max(found, key=lambda store: store.statement.lineno)
        end = last.statement.end_lineno or last.statement.lineno
        spans = [(loop.lineno, loop.end_lineno or loop.lineno) for loop in last.loops]
        if any(
            line > end or any(first <= line <= final for first, final in spans)
            for line in reads.get(name, [])
        ):
            continue
        gaps.append(_block_end(last.block, last.statement))
    return sorted(dict.fromkeys(gaps))


@dataclass
class _Store:
    """One statement storing into a local: the statement, the block holding it, the loops around it, and whether
    it assigns the name itself (`name = ...`)."""

    statement: ast.stmt
    block: list[ast.stmt]
    loops: list[ast.stmt]
    assigned: bool

    @property
    def aliased(self) -> bool:
        """Whether it binds the name to an object something else holds too (`data = self.data`)."""
        value = getattr(self.statement, "value", None)
        return self.assigned and isinstance(value, (ast.Name, ast.Attribute, ast.Subscript))


def _collect_stores(block: list[ast.stmt], loops: list[ast.stmt], stores: dict[str, list[_Store]]) -> None:
    """Every store of `block` and the blocks inside it (not inside nested functions or classes), by name."""
    for statement in block:
        for name, assigned in _stored(statement):
            stores.setdefault(name, []).append(_Store(statement, block, loops, assigned))
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        around = [*loops, statement] if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)) else loops
        for inner in _blocks(statement):
            _collect_stores(inner, around, stores)


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of statements a compound statement holds."""
    blocks = [getattr(statement, field, None) or [] for field in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(statement, "handlers", [])]
    blocks += [case.body for case in getattr(statement, "cases", [])]
    return [block for block in blocks if block and isinstance(block[0], ast.stmt)]


def _stored(statement: ast.stmt) -> list[tuple[str, bool]]:
    """(name, whether the statement assigns the name itself) for each local an assignment stores into: `name =`,
    `name.attr =`, `name[k] =`, `name +=`; not unpacked targets (one part of them unused is common)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and (
        statement.value is not None or isinstance(statement, ast.AugAssign)
    ):
        targets = [statement.target]
    else:
        return []
    found = []
    for target in targets:
        base = _store_base(target)
        if base is not None:
            found.append((base.id, isinstance(target, ast.Name) and not isinstance(statement, ast.AugAssign)))
    return found


def _store_base(target: ast.expr) -> ast.Name | None:
    """The name a store target stores into (`x` of `x`, `x.a.b`, `x[k]`), None for others (tuples, calls)."""
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return target if isinstance(target, ast.Name) else None


def _reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[int]]:
    """The lines reading each name in the function: not the names stores go into (`x` of `x.a = 1`); a read
    inside a nested function, class or lambda counts as after everything."""
    bases = {
        id(base)
        for node in ast.walk(function)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if not isinstance(target, ast.Name) and (base := _store_base(target)) is not None
    }
    nested = {
        id(inner)
        for node in ast.walk(function)
        if node is not function
        and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        for inner in ast.walk(node)
    }
    reads: dict[str, list[int]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in bases:
            reads.setdefault(node.id, []).append(_LATER if id(node) in nested else node.lineno)
    return reads


def _block_end(block: list[ast.stmt], statement: ast.stmt) -> int:
    """The gap at the end of `block` (which holds `statement`): after its last statement, or before it when that
    statement leaves the block (`return`, `raise`, `break`, `continue`), but not above `statement`."""
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue)) and last is not statement:
        return max(last.lineno - 1, statement.end_lineno or statement.lineno)
    return last.end_lineno or last.lineno


def mixed_returns(text: str, number: int) -> list[int]:
    """The lines after which line `number`'s function falls off its end (line_insertions.returnless_gaps) when it
    returns a value elsewhere: a path that returns None by omission (not a generator's)."""
    function = function_at(text, number)
    if function is None:
        return []
    nested = {
        id(inner)
        for node in ast.walk(function)
        if node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for inner in ast.walk(node)
    }
    own = [node for node in ast.walk(function) if id(node) not in nested]
    if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in own):
        return []
    valued = any(
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        for node in own
    )
    return returnless_gaps(text, number) if valued and _completes(function.body) else []


def _completes(block: list[ast.stmt]) -> bool:
    """Whether control can leave `block` at its end (not by a `return` or `raise` on every path)."""
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return not last.orelse or _completes(last.body) or _completes(last.orelse)
    if isinstance(last, ast.Try):
        handled = any(_completes(handler.body) for handler in last.handlers)
        return (_completes(last.orelse or last.body) or handled) and (
            not last.finalbody or _completes(last.finalbody)
        )
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _completes(last.body)
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value:
        return any(isinstance(node, ast.Break) for node in ast.walk(last))
    return True


def misread_values(text: str, number: int) -> list[int]:
    """The lines that may read the wrong one of two values unpacked together: for `a, b = ...` in line `number`'s
    function (not in a loop) whose `b` nothing reads afterwards while `a` is read, the lines reading `a` after
    it, last first (a copied line is usually the later one)."""
    function = function_at(text, number)
    if function is None:
        return []
    reads = _reads(function)
    loops = [node for node in ast.walk(function) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))]
    found: list[int] = []
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, ast.Assign) else []
        unpacked = [target for target in targets if isinstance(target, (ast.Tuple, ast.List))]
        if not unpacked or any(_within_lines(loop, node.lineno) for loop in loops):
            continue
        end = node.end_lineno or node.lineno
        names = [elt.id for target in unpacked for elt in target.elts if isinstance(elt, ast.Name)]
        later = {name: [line for line in reads.get(name, []) if line > end] for name in names if name != "_"}
        if any(not lines for lines in later.values()):
            found += sorted(
                {line for lines in later.values() for line in lines if line < _LATER}, reverse=True
            )
    return list(dict.fromkeys(found))


def _within_lines(node: ast.AST, line: int) -> bool:
    """Whether line `line` is inside the statement `node`."""
    return node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)


def unbalanced_counters(text: str, number: int) -> list[int]:
    """The gaps where the class around line `number` misses a counter's change: for an attribute of `self` the
    class only decreases (`self.n -= 1`, never `+=`) or only increases, the end of the method paired with the one
    that changes it (`__enter__` for `__exit__`; before its final `return`)."""
    tree = _parsed(text)
    classes = [
        node
        for node in (ast.walk(tree) if tree is not None else [])
        if isinstance(node, ast.ClassDef) and node.lineno <= number <= (node.end_lineno or node.lineno)
    ]
    if not classes:
        return []
    owner = min(classes, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    methods = {n.name: n for n in owner.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    changes: dict[str, dict[str, set[str]]] = {}  # attribute -> direction -> methods changing it so
    for method in methods.values():
        for node in ast.walk(method):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
                attribute = _self_attribute(node.target)
                if attribute:
                    direction = "up" if isinstance(node.op, ast.Add) else "down"
                    changes.setdefault(attribute, {}).setdefault(direction, set()).add(method.name)
    gaps = []
    for directions in changes.values():
        if len(directions) != 1:
            continue
        for name in sorted(next(iter(directions.values()))):
            partner = methods.get(PAIRED_METHODS.get(name, ""))
            if partner is not None:
                gaps.append(_block_end(partner.body, partner.body[0]))
    return list(dict.fromkeys(gaps))


def _self_attribute(target: ast.expr) -> str | None:
    """`n` for a target `self.n`, else None."""
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr
    return None


def formatted_none(failure: str) -> bool:
    """Whether the first failure's error lines show a None formatted into text (`'complement(None)'`, `'5None'`):
    a value a guard should have kept from being formatted, or a function that returned nothing."""
    return any(_FORMATTED_NONE.search(line) for line in failure.splitlines() if line.startswith("E "))


def formatting_starts(text: str, number: int) -> list[int]:
    """The gap at the start of line `number`'s function (after its docstring) when that line formats values
    into text (an f-string with a value, `%` on a string, `.format(...)`, `str(...)`, `repr(...)`); else []."""
    tree, function = _parsed(text), function_at(text, number)
    if tree is None or function is None:
        return []
    statements = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.stmt)
        and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno <= number <= (node.end_lineno or node.lineno)
        and not _blocks(node)
    ]
    if not any(_formats(node) for statement in statements for node in ast.walk(statement)):
        return []
    body = function.body
    first = body[1] if is_docstring(body[0]) and len(body) > 1 else body[0]
    return [first.lineno - 1]


def _formats(node: ast.AST) -> bool:
    """Whether an expression formats a value into text."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
    if isinstance(node, ast.Call):
        name = _named(node.func)
        return name in {"str", "repr"} or (
            name == "format"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Constant)
        )
    return False


def _named(node: ast.expr) -> str:
    """The last name of a name or dotted attribute (`abc.abstractmethod` -> `abstractmethod`), else ''."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _parsed(text: str) -> ast.Module | None:
    """The file's syntax tree, None when it does not parse."""
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None
