"""Bugs beyond one line (issue 34, item 6), injected with `ast` like mutations.py's, as a separate task set.

Kinds:
  continuation_line       a one-line mutation (operator, comparison, off by one, wrong variable) on a continuation
                          line of a statement spanning several lines: a wrong argument inside a multi-line call
  missing_statement       a simple statement removed: a function's final `return x`, an `x += n`, or a guard
                          `if ...: return/raise ...` (one or two lines); the fix inserts it again
  dropped_condition_part  the last part of a one-line `if`/`while` condition of three or more parts removed
                          (`if a and b and c:` -> `if a and b:`)
  related_lines           two related lines: a wrong argument of a call whose result a name holds, and a wrong
                          operand on a later line that reads that name (both must be fixed)
A mutation of several lines writes its lines joined by newlines (Mutation.apply).
"""

from __future__ import annotations

import ast
import io
import tokenize

from benchmarks.repair.mutations import Mutation, _functions, find_mutations, is_valid

MULTI_KINDS = ("continuation_line", "missing_statement", "dropped_condition_part", "related_lines")
ONE_LINE_KINDS = ("swapped_operator", "swapped_comparison", "off_by_one", "wrong_variable")


def find_multiline_mutations(source: str, path: str, lines: set[int] | None = None) -> list[Mutation]:
    """Every mutation of MULTI_KINDS inside the functions of `source` touching `lines` if given, in source order;
    only those whose module parses and means something else."""
    tree = ast.parse(source)
    text_lines = source.splitlines()
    one_line = [m for m in find_mutations(source, path, None, check=False) if m.kind in ONE_LINE_KINDS]
    found = _continuation(one_line, _continuation_lines(source))
    found += _missing_statements(tree, text_lines, path)
    found += _dropped_parts(source, path)
    found += _related(tree, one_line, text_lines)
    if lines is not None:
        found = [m for m in found if m.line in lines]
    reference = ast.dump(tree)
    unique = {(m.line, m.kind, m.original, m.mutated): m for m in found}
    ordered = sorted(unique.values(), key=lambda m: (m.line, m.kind, m.mutated))
    return [m for m in ordered if is_valid(m, source, reference)]


def _continuation_lines(source: str) -> set[int]:
    """The lines that continue a statement begun on an earlier line."""
    found: set[int] = set()
    first = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT) and first is None:
            continue
        if first is None:
            first = token.start[0]
        if token.type == tokenize.NEWLINE:
            found.update(range(first + 1, token.end[0] + 1))
            first = None
    return found


def _continuation(one_line: list[Mutation], continuation: set[int]) -> list[Mutation]:
    """The one-line mutations on continuation lines, as continuation_line bugs."""
    return [_kind(m, "continuation_line") for m in one_line if m.line in continuation]


def _missing_statements(tree: ast.Module, lines: list[str], path: str) -> list[Mutation]:
    """A final `return x`, an augmented assignment or a guard removed from a body that keeps another statement."""
    found = []
    for qualname, func in _functions(tree):
        for body in _bodies(func):
            if len(body) < 2:
                continue
            for index, stmt in enumerate(body):
                final_return = (
                    isinstance(stmt, ast.Return) and stmt.value is not None and index == len(body) - 1
                )
                if not (final_return or isinstance(stmt, ast.AugAssign) or _is_guard(stmt)):
                    continue
                first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                if last - first > 1:
                    continue
                original = "\n".join(lines[first - 1 : last])
                found.append(Mutation(path, first, "missing_statement", qualname, original, ""))
    return found


def _bodies(func: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of a function, its nested blocks included (not nested functions or classes)."""
    found = []
    stack = [func]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
                stack += [
                    s
                    for s in block
                    if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                ]
    return found


def _is_guard(stmt: ast.stmt) -> bool:
    """`if ...: return/raise ...` without an else, on one or two lines."""
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], (ast.Return, ast.Raise))
    )


def _dropped_parts(source: str, path: str) -> list[Mutation]:
    """`if a and b and c:` -> `if a and b:`: the last part of a one-line condition of three or more parts."""
    found = []
    lines = source.splitlines()
    tree = ast.parse(source)
    owners = {
        line: name
        for name, func in _functions(tree)
        for line in range(func.lineno, (func.end_lineno or 0) + 1)
    }
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.While)) or not isinstance(node.test, ast.BoolOp):
            continue
        test = node.test
        if len(test.values) < 3 or test.lineno != test.end_lineno or node.lineno not in owners:
            continue
        raw = lines[test.lineno - 1].encode()
        before, last = test.values[-2], test.values[-1]
        mutated = (raw[: before.end_col_offset] + raw[last.end_col_offset :]).decode()
        original = raw.decode()
        found.append(
            Mutation(path, test.lineno, "dropped_condition_part", owners[node.lineno], original, mutated)
        )
    return found


def _related(tree: ast.Module, one_line: list[Mutation], lines: list[str]) -> list[Mutation]:
    """A wrong argument of `name = call(...)` and a wrong operand on the next line that reads `name`."""
    by_line: dict[int, list[Mutation]] = {}
    for m in one_line:
        by_line.setdefault(m.line, []).append(m)
    found = []
    for _, func in _functions(tree):
        for node in ast.walk(func):
            if not (
                isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1
            ):
                continue
            target = node.targets[0]
            if not isinstance(target, ast.Name) or node.lineno != node.end_lineno or not node.value.args:
                continue
            use = _next_use(func, target.id, node.lineno)
            if use is None or use not in by_line:
                continue
            argument = [m for m in by_line.get(node.lineno, []) if m.kind in ("wrong_variable", "off_by_one")]
            if not argument:
                continue
            first, second = argument[0], by_line[use][0]
            original = "\n".join(lines[node.lineno - 1 : use])
            block = lines[node.lineno - 1 : use]
            block[0], block[-1] = first.mutated, second.mutated
            found.append(
                Mutation(first.path, node.lineno, "related_lines", first.function, original, "\n".join(block))
            )
    return found


def _next_use(func: ast.AST, name: str, after: int) -> int | None:
    """The first line after `after` (within 3 lines) that reads `name`."""
    reads = sorted(
        n.lineno
        for n in ast.walk(func)
        if isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Load)
        and n.id == name
        and after < n.lineno <= after + 3
    )
    return reads[0] if reads else None


def _kind(mutation: Mutation, kind: str) -> Mutation:
    """The same mutation under another kind."""
    return Mutation(
        mutation.path, mutation.line, kind, mutation.function, mutation.original, mutation.mutated
    )
