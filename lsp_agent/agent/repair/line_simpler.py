"""The repair loop's passing edit made as small as it can be (small profile): when the model's edit that makes the
tests pass changes one line, the simpler versions between the line and the model's (each part of its change alone,
agent/repair/line_alternatives.py) are tested too, and the proposal is the passing version that changes the fewest tokens;
the summary names the others. Line repairs do this themselves (agent/repair/line_repair.py), so it is off while they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_agent.agent.repair.line_alternatives import MAX_SIMPLER, alternatives_note, ranked, simpler_versions
from lsp_agent.agent.repair.line_repair import unique_edit
from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry
from lsp_agent.tools.tested_edit import EDIT_TOOL, resolve_path

if TYPE_CHECKING:
    from lsp_agent.tools.tested_edit import EditTesting


def changed_line(before: str, after: str) -> int | None:
    """The index of the one line an edit changed (the same number of lines otherwise equal), else None."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) != len(new):
        return None
    changed = [n for n, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    return changed[0] if len(changed) == 1 else None


def make_passing_edits_simplest(registry: ToolRegistry, testing: EditTesting) -> bool:
    """Wrap the tested edit_file: a one-line edit the tests pass with gives way to a simpler passing version."""
    tool = registry.get(EDIT_TOOL)
    if tool is None:
        return False
    inner = tool.function

    async def run(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
        resolved = resolve_path(ctx, path, old_text, testing.candidates)
        key = ctx.overlay.normalize(resolved) if resolved else ""
        before = ctx.overlay.read_text(key) if key and ctx.overlay.is_file(key) else None
        output = await inner(ctx, path=path, old_text=old_text, new_text=new_text)
        if not testing.simplify or before is None or not testing.verified(ctx) or testing.suite_failing:
            return output
        after = ctx.overlay.read_text(key)
        number = changed_line(before, after)
        if number is None:
            return output
        original, version = before.splitlines()[number], after.splitlines()[number]
        note = await _simplest(ctx, testing, inner, key, before, number, (original, version, after))
        testing.note = note
        return f"{output}\n{note}" if note else output

    registry.register(Tool(tool.name, tool.description, tool.parameters, run, tool.permission), replace=True)
    return True


async def _simplest(
    ctx: ToolContext,
    testing: EditTesting,
    inner: Any,
    key: str,
    before: str,
    number: int,
    passing: tuple[str, str, str],
) -> str:
    """Test the simpler versions of the changed line (each from the file as it was before the edit); leave the
    file with the passing version that changes fewest tokens, the tests' state with it; the summary's note."""
    original, version, after = passing
    state = (testing.passed, testing.passed_report, testing.passed_suite)
    baseline, kept = testing.baseline, testing.kept
    found = {version: (after, state)}
    lines = before.splitlines()
    for simpler in simpler_versions(original, version)[:MAX_SIMPLER]:
        ctx.overlay.write_text(key, before)
        edit = unique_edit(lines, number + 1, simpler)
        if edit is None:
            continue
        try:
            await inner(ctx, path=key, old_text=edit[0], new_text=edit[1])
        except ToolError:
            continue
        if testing.verified(ctx) and not testing.suite_failing:
            found[simpler] = (
                ctx.overlay.read_text(key),
                (testing.passed, testing.passed_report, testing.passed_suite),
            )
    versions = ranked(original, list(found))
    text, chosen = found[versions[0]]
    ctx.overlay.write_text(key, text)
    testing.passed, testing.passed_report, testing.passed_suite = chosen
    testing.baseline, testing.kept = baseline, kept
    note = alternatives_note(original, versions)
    testing.alternatives = (
        {"path": key, "line": number + 1, "versions": versions, "status": note} if note else {}
    )
    if versions[0] == version:
        return note
    head = f"A simpler version of {key} line {number + 1} passes too: `{versions[0].strip()}` is proposed instead."
    return f"{head} {note}"
