"""The syntax check before finishing covers every language the index parses: the parse errors (tree-sitter ERROR
and MISSING nodes, Python's own compiler) an edit introduced, never those already in the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import call, done, run_script

from lsp_agent.tools.syntax_check import introduced_errors, syntax_errors
from lsp_agent.workspace.proposal import FileChange

CALC_TS = "export function sub(a: number, b: number): number {\n  return a + b;\n}\n"


@pytest.fixture
def ts_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ts"
    root.mkdir()
    (root / "calc.ts").write_text(CALC_TS)
    (root / "legacy.ts").write_text("export const ok = 1;\nfunction broken( {\n")  # unparsable before the run
    return root


def edit(path: str, old: str, new: str) -> dict:
    """A script step with one native edit_file call."""
    return {"content": "", "tool_calls": [call("edit_file", path=path, old_text=old, new_text=new)]}


async def test_a_typescript_edit_that_breaks_parsing_is_refused_before_finishing(ts_workspace: Path) -> None:
    script = [edit("calc.ts", "a + b;", "a - ;"), done("fixed"), done("fixed anyway")]
    o = await run_script(ts_workspace, script, "sub adds; make it subtract")
    edited = o.requests[1]["messages"][-1]["content"]
    assert "Warning: syntax error: calc.ts:2: missing 'identifier' (typescript parser)" in edited
    refusal = o.requests[2]["messages"][-1]["content"]
    assert refusal.startswith(
        "Not finished yet: your changes left syntax errors in these files:\n- calc.ts:2:"
    )
    assert o.result.status == "checks_failed" and not o.result.success
    assert o.result.checks_failed == ["syntax error: calc.ts:2: missing 'identifier' (typescript parser)"]


async def test_errors_already_in_a_file_are_not_the_runs(ts_workspace: Path) -> None:
    script = [edit("legacy.ts", "ok = 1", "ok = 2"), edit("calc.ts", "a + b", "a - b"), done("fixed")]
    o = await run_script(ts_workspace, script, "fix sub, and make ok 2")
    assert o.result.status == "success" and o.result.answer == "fixed" and o.result.checks_failed == []
    assert all("Warning: syntax error" not in r["output"] for r in o.of("tool_result"))


@pytest.mark.parametrize(
    ("path", "base", "new", "expected"),
    [
        ("main.go", "package main\n\nfunc main() {}\n", "package main\n\nfunc main() {\n", "main.go:3: "),
        (
            "lib.rs",
            "fn f() -> i32 { 1 }\n",
            "fn f() -> i32 { let x = ; 1 }\n",
            "lib.rs:1: syntax error at `=`",
        ),
        ("App.java", "class App {}\n", "class App { void f( }\n", "App.java:1: "),
        ("x.c", "int f(void) { return 1; }\n", "int f(void) { return 1 }\n", "x.c:1: missing ';'"),
        ("w.js", "const a = [1, 2];\n", "const a = [1, 2;\n", "w.js:1: "),
        ("new.py", None, "def f(:\n", "new.py:1: invalid syntax"),
    ],
)
def test_each_indexed_language_reports_what_an_edit_broke(
    path: str, base: str | None, new: str, expected: str
) -> None:
    (problem,) = introduced_errors(path, base, new)
    assert problem.startswith(expected), problem


def test_unchanged_problems_moved_by_an_edit_are_not_reported() -> None:
    base = "function broken( {\n"
    assert introduced_errors("a.ts", base, "// a comment on top\n" + base) == []
    assert (
        introduced_errors("a.py", "print 'py2'\n", "import os\nprint 'py2'\n") == []
    )  # did not compile before
    assert introduced_errors("notes.md", "# a", "# a (") == []  # no grammar: nothing to check
    kinds = ("create", "modify", "delete")
    changes = [
        FileChange("n.ts", kinds[0], None, "let = ;\n"),
        FileChange("ok.ts", kinds[1], "let a = 1;\n", "let a = 2;\n"),
        FileChange("gone.ts", kinds[2], "x(\n", None),
    ]
    (problem,) = syntax_errors(changes)
    assert problem.startswith("n.ts:1: ")
