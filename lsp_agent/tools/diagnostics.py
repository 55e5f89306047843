"""Diagnostics after each edit: the edit tools' observation says when a Python file gained undefined names.

pyflakes checks the proposed file; only problems the edit introduced are reported (names undefined before the
edit are not the model's doing). Syntax errors are already reported by the edit tools themselves.
"""

from __future__ import annotations

import inspect
from collections import Counter

from lsp_agent.tools.registry import Tool, ToolContext, ToolRegistry
from lsp_agent.workspace.python_parse import parse_python

EDIT_TOOLS = ("edit_file", "write_file")
PYTHON_SUFFIXES = (".py", ".pyi")
MAX_REPORTED = 5
# pyflakes messages that mean the code will fail at run time, not style
_RUNTIME_PROBLEMS = ("UndefinedName", "UndefinedLocal", "UndefinedExport")


def runtime_problems(path: str, text: str) -> list[tuple[int, str]]:
    """(line, message) for names pyflakes finds undefined in `text`; [] when it does not parse."""
    from pyflakes.checker import Checker

    try:
        tree = parse_python(text, path)
    except (SyntaxError, ValueError):
        return []
    found = []
    for message in Checker(tree, filename=path).messages:
        if type(message).__name__ in _RUNTIME_PROBLEMS:
            found.append((message.lineno, message.message % message.message_args))
    return sorted(found)


def new_problems(path: str, before: str | None, after: str) -> list[tuple[int, str]]:
    """The problems of `after` that `before` did not have (compared by message, not line)."""
    old = Counter(msg for _, msg in runtime_problems(path, before)) if before else Counter()
    fresh = []
    for line, msg in runtime_problems(path, after):
        if old[msg] > 0:
            old[msg] -= 1
        else:
            fresh.append((line, msg))
    return fresh


def diagnostics_note(path: str, problems: list[tuple[int, str]]) -> str:
    """The text appended to an edit's observation."""
    if not problems:
        return f"\nCheck of {path}: parses, no new undefined names."
    shown = "\n".join(f"- line {line}: {msg}" for line, msg in problems[:MAX_REPORTED])
    more = len(problems) - MAX_REPORTED
    extra = f"\n- and {more} more" if more > 0 else ""
    return f"\nWarning: after this edit {path} has undefined names:\n{shown}{extra}\nFix them if they are mistakes."


def _checked(tool: Tool) -> Tool:
    """`tool` with a pyflakes check of the edited Python file appended to a successful observation."""
    original = tool.function

    def run(ctx: ToolContext, path: str, **arguments: object) -> str:
        key = ctx.overlay.normalize(path)
        before = ctx.overlay.read_text(key) if ctx.overlay.is_file(key) else None
        output = original(ctx, path=path, **arguments)
        if not isinstance(output, str) or not key.endswith(PYTHON_SUFFIXES) or not ctx.overlay.is_file(key):
            return output
        after = ctx.overlay.read_text(key)
        try:
            parse_python(after, key)
        except (SyntaxError, ValueError):
            return output  # the edit tool already says where it does not parse
        return output + diagnostics_note(key, new_problems(key, before, after))

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def add_edit_diagnostics(registry: ToolRegistry) -> list[str]:
    """Wrap the registry's edit tools with the check; returns the names wrapped."""
    wrapped = []
    for name in EDIT_TOOLS:
        tool = registry.get(name)
        if tool is None or inspect.iscoroutinefunction(tool.function):
            continue
        if not getattr(tool.function, "__wrapped_by_diagnostics__", False):
            checked = _checked(tool)
            checked.function.__wrapped_by_diagnostics__ = True  # type: ignore[attr-defined]
            registry.register(checked, replace=True)
            wrapped.append(name)
    return wrapped
