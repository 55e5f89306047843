"""Line repairs that add code instead of correcting a line (agent/repair/line_repair.py, with an infill template): a missing
statement (a line inserted between two lines: a `return x`, an `i += 1`, a guard `if not items: return None`) and a
part dropped from a compound condition (`if a and b:` extended at the end of its condition).

Both are fill-in-the-middle prompts: for an insertion nothing is left out, the hole sits between the site's line and
the next; for an extension the hole sits at the end of the condition, after an `and`/`or` the prompt writes itself,
so the model writes the missing part. The version tested replaces the site's line, so the tested edit, its undo and
its summary work as for any line: an insertion's version is the line with the new lines after it. Where a line is
inserted: around a suspicious line (insertion_gaps), or, when a test got a None, where a function falls off its end
(returnless_gaps) or at the end of a called function left with only its docstring (empty_callees).
"""

from __future__ import annotations

import ast
import re

from lsp_agent.agent.repair.line_candidates import without_comment
from lsp_agent.agent.repair.line_infill import LINES_AFTER, LINES_BEFORE
from lsp_agent.settings_values import INFILL_PRESETS
from lsp_agent.workspace.python_parse import parse_python

MAX_INSERTED = 2  # lines one insertion adds (a guard and its return)
_CONDITION = re.compile(r"^(\s*(?:if|elif|while)\s+)(.+?)(\s*:\s*(?:#.*)?)$")
_BLOCK_START = re.compile(r":\s*(?:#.*)?$")


def insertion_gaps(text: str, number: int) -> list[int]:
    """The lines after which a missing statement is looked for, for a suspicious line `number` (1-based): the end of
    its function (a missing `return`), the start of its body (a missing guard), then the line itself; [number] when
    it is in no function (or the file does not parse)."""
    function = function_at(text, number)
    if function is None:
        return [number]
    body = function.body
    docstring = is_docstring(body[0]) and len(body) > 1
    first = body[1] if docstring else body[0]
    gaps = [function.end_lineno or number, first.lineno - 1, number]
    return list(dict.fromkeys(gaps))


def returnless_gaps(text: str, number: int) -> list[int]:
    """The lines after which control falls off the end of line `number`'s function (it returns None there), last
    first: the ends of the blocks its last statement runs through (an `if`'s branches, a `try`'s body and
    handlers, a `with`'s body), not those that end in a `return` or `raise`; [] outside a function."""
    function = function_at(text, number)
    return [] if function is None else list(dict.fromkeys(_fall_ends(function.body)))


def named_returnless_gaps(text: str, name: str) -> list[int]:
    """returnless_gaps of every function called `name` in the file (a failure named it returning None)."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return []
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
    ]
    return list(dict.fromkeys(gap for function in functions for gap in _fall_ends(function.body)))


def empty_callees(text: str, number: int) -> list[int]:
    """The last lines of the functions of the same file called on line `number` that have no statement but their
    docstring (a missing `return` left nothing else): the gaps where their statement goes."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return []
    called = {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.lineno <= number <= (node.end_lineno or node.lineno)
        and isinstance(node.func, (ast.Name, ast.Attribute))
    }
    return [
        node.end_lineno or node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name in called
        and len(node.body) == 1
        and is_docstring(node.body[0])
    ]


def _fall_ends(body: list[ast.stmt]) -> list[int]:
    """The last lines of `body` after which control leaves it without a return or raise, innermost last."""
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return []
    ends = [last.end_lineno or last.lineno]
    if isinstance(last, ast.If):
        ends += _fall_ends(last.body) + (_fall_ends(last.orelse) if last.orelse else [])
    elif isinstance(last, ast.Try):
        ends += _fall_ends(last.orelse or last.body)
        ends += [end for handler in last.handlers for end in _fall_ends(handler.body)]
    elif isinstance(last, (ast.With, ast.AsyncWith)):
        ends += _fall_ends(last.body)
    return ends


def function_at(text: str, number: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function holding line `number` (None: in none, or the file does not parse)."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return None
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno <= number <= (node.end_lineno or node.lineno)
    ]
    return min(functions, key=lambda node: (node.end_lineno or node.lineno) - node.lineno, default=None)


def is_docstring(statement: ast.stmt) -> bool:
    """Whether a statement is a bare string (a docstring)."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def insertion_prompt(template: str, lines: list[str], after: int) -> str:
    """The infill prompt with a hole between line `after` (1-based) and the next, nothing left out."""
    prefix = "".join(f"{line}\n" for line in lines[max(0, after - LINES_BEFORE) : after])
    suffix = "".join(f"\n{line}" for line in lines[after : after + LINES_AFTER])
    return _filled(template, prefix, suffix + "\n")


def inserted_version(reply: str, lines: list[str], after: int) -> str | None:
    """Line `after` followed by the lines the model filled in after it (at most MAX_INSERTED, indented as it wrote
    them, else like line `after`); None when it wrote no code or only a copy of a line next to the hole."""
    written = [line.rstrip() for line in reply.splitlines() if without_comment(line.strip())]
    written = [line for line in written if without_comment(line.strip())][:MAX_INSERTED]
    if not written:
        return None
    neighbours = {_key(lines[n]) for n in (after - 1, after) if 0 <= n < len(lines)}
    if all(_key(line) in neighbours for line in written):
        return None
    if not written[0][
        :1
    ].isspace():  # no indentation written: the line before the hole's (its block's, if it opens one)
        above = lines[after - 1]
        indent = above[: len(above) - len(above.lstrip())] + ("    " if _BLOCK_START.search(above) else "")
        written = [indent + line if not line[:1].isspace() else line for line in written]
    if len(written) == 1 and _BLOCK_START.search(written[0]):
        return None  # a block header without its body
    return "\n".join([lines[after - 1], *written])


def condition_parts(line: str) -> tuple[str, str, str] | None:
    """(head up to the condition's end, the joiner a new part takes, the rest: the colon and any comment) of an
    `if`/`elif`/`while` line, or None. The joiner is the condition's own `and`/`or`, else `or` (a guard missing a
    case)."""
    match = _CONDITION.match(line)
    if match is None:
        return None
    keyword, condition, rest = match.groups()
    try:
        tree = parse_python(condition.strip())
    except (SyntaxError, ValueError):
        return None
    body = tree.body[0] if tree.body else None
    if not isinstance(body, ast.Expr):
        return None
    value = body.value
    joiner = "and" if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else "or"
    return keyword + condition, joiner, rest


def extension_prompt(template: str, lines: list[str], number: int) -> str | None:
    """The infill prompt with a hole at the end of line `number`'s condition, after its joiner; None for a line that
    is no condition."""
    parts = condition_parts(lines[number - 1])
    if parts is None:
        return None
    head, joiner, rest = parts
    prefix = "".join(f"{line}\n" for line in lines[max(0, number - 1 - LINES_BEFORE) : number - 1])
    suffix = "".join(f"\n{line}" for line in lines[number : number + LINES_AFTER])
    return _filled(template, f"{prefix}{head} {joiner} ", f"{rest}{suffix}\n")


def extended_version(reply: str, line: str) -> str | None:
    """Line `line` with the condition part the model filled in (its first line, up to the colon), or None when it
    wrote nothing that makes a condition."""
    parts = condition_parts(line)
    first = next((text.strip() for text in reply.splitlines() if text.strip()), "")
    part = first.split(":", 1)[0].strip()  # the model may write the colon and what follows
    if parts is None or not part:
        return None
    head, joiner, rest = parts
    version = f"{head} {joiner} {part}{rest}"
    return version if condition_parts(version) is not None else None


def _filled(template: str, prefix: str, suffix: str) -> str:
    """The template (or the preset so named) with its prefix and suffix."""
    template = INFILL_PRESETS.get(template, template)
    parts = {"prefix": prefix, "suffix": suffix}
    return re.sub(r"\{(prefix|suffix)\}", lambda hole: parts[hole.group(1)], template)


def _key(text: str) -> str:
    """A line compared without whitespace."""
    return "".join(text.split())
