"""What a fix may change: not the tests the task names, unless the task asks for test changes.

A small model out of ideas rewrites the failing assertion's expected value; the named tests then pass and prove
nothing. So an edit of a file the task's named tests live in is refused as a fix (tested edits, line repairs), and
a finish whose proposal changes one has that change undone first (tools/verify.py), each with an observation telling
the model to fix the code the test calls. A task that asks for test changes ("update the test", "add a test for",
"the test is wrong") lifts the rule.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_agent.tools.registry import ToolContext

_EDIT_VERBS = r"add|write|update|change|edit|modify|rewrite|adjust|correct|extend|amend|rename|remove|delete"
# "update the test", "add a test for", "write tests", "change the expected value", "the test is wrong"
_ASKS = re.compile(
    rf"\b(?:{_EDIT_VERBS})\b(?:\s+\S+){{0,4}}?\s+(?:tests?|test\s+cases?|assertions?|expected\s+values?|"
    rf"expectations?)(?![\w/]|\.\w)|\btests?\b(?:\s+\S+){{0,3}}?\s+(?:is|are)\s+(?:wrong|outdated|incorrect|stale)\b",
    re.I,
)


def asks_for_test_changes(task: str) -> bool:
    """Whether the task asks to change tests (then an edit of the named tests may be the fix)."""
    return bool(_ASKS.search(task))


def named_test_file(path: str, targets: list[str]) -> bool:
    """Whether `path` (workspace-relative, normalized) is a file the task's named tests live in."""
    return any(path == target.split("::", 1)[0].removeprefix("./") for target in targets)


def test_edit_refusal(path: str) -> str:
    """The observation for an edit of a named test file: the fix belongs in the code."""
    return (
        f"{path} holds the tests the task names: changing them (or their expected values) does not fix the bug, "
        "so that edit was not made. Fix the code the test calls so that the test passes as it is written."
    )


def undo_test_edits(ctx: ToolContext, targets: list[str]) -> list[str]:
    """Revert the proposal's changes to the named test files; the paths reverted."""
    undone = [path for path in ctx.overlay.changed_paths() if named_test_file(path, targets)]
    for path in undone:
        ctx.overlay.revert(path)
    return undone


def undone_message(paths: list[str]) -> str:
    """Why a finish was refused after its changes to the named tests were undone."""
    return (
        f"not finished: your changes to {', '.join(paths)} (the tests the task names) were undone, as a change to "
        "the tests does not count as the fix. Fix the code the tests call, then call task_complete again."
    )
