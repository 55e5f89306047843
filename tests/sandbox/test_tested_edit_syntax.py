"""The small profile's tested edits refuse an edit that breaks parsing in any language the index parses, not only
Python (real loop, litellm, the sandbox, scripted model in prompt mode): a TypeScript edit that leaves the file
unparsable is undone at once, one that parses stands, and errors the file already had do not count."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import CALC, asker, run_scripted

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins", "litellm_imported")]
TASK = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."
SMALL = {"profile": "small", "tool_calling": "prompt", "repair_lines": 0}  # the loop alone (no line repairs)
APP = "export function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n"
LEGACY = "export const ok = 1;\nfunction broken( {\n"  # did not parse before the run


def block(path: str, old: str, new: str) -> dict:
    """A script step: a THOUGHT and one SEARCH/REPLACE block."""
    return {
        "content": f"<THOUGHT>edit</THOUGHT>\n{path}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"
    }


async def test_a_typescript_edit_that_breaks_parsing_is_undone_and_one_that_parses_stands(
    project: Path,
) -> None:
    (project / "web").mkdir()
    (project / "web" / "app.ts").write_text(APP)
    (project / "web" / "legacy.ts").write_text(LEGACY)
    script = [
        block(
            "web/app.ts", "  return xs.reduce((a, b) => a + b, 0);", "  return xs.reduce((a, b) => a + b, 0;"
        ),
        block("web/legacy.ts", "export const ok = 1;", "export const ok = 2;"),
        block(
            "web/app.ts", "  return xs.reduce((a, b) => a + b, 0);", "  return xs.reduce((a, b) => b + a, 0);"
        ),
        block("pkg/calc.py", "    return a - b", "    return a + b"),
    ]
    out = await run_scripted(project, script, TASK, permission=asker("allow_once"), **SMALL)
    edits = [r for r in out.of("tool_result") if r["name"] == "edit_file"]
    assert [e["ok"] for e in edits] == [False, True, True, True], edits
    assert edits[0]["output"] == (
        "Error: that edit leaves web/app.ts unparsable (line 2: missing ')' (typescript parser)), so it was "
        "undone. Make a different edit."
    )
    result = out.result
    assert result.success and not result.checks_failed, result.answer
    texts = {change.path: change.new_text for change in result.proposal.changes}
    assert texts["web/app.ts"] == APP.replace("a + b, 0", "b + a, 0")  # the parsing edit, not the broken one
    assert texts["web/legacy.ts"] == LEGACY.replace("ok = 1", "ok = 2")  # its old error is not the edit's
    assert texts["pkg/calc.py"] == CALC.replace("a - b", "a + b")
