"""Diagnostics after edits (pyflakes through the real edit tools) and pytest report condensing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_agent.tools.diagnostics import add_edit_diagnostics, new_problems
from lsp_agent.tools.registry import ToolContext, default_registry
from lsp_agent.tools.test_runs import condense_pytest, named_source_files, named_test_files
from lsp_agent.workspace.overlay import Overlay

MODULE = "import os\n\n\ndef area(width, height):\n    return width * height\n"

PYTEST_OUTPUT = """\
..F.F                                                                    [100%]
=================================== FAILURES ===================================
_________________________________ test_area __________________________________
tests/test_geo.py:5: in test_area
    assert area(2, 3) == 6
E   assert 5 == 6
E    +  where 5 = area(2, 3)
_________________________________ test_zero __________________________________
tests/test_geo.py:9: in test_zero
    assert area(0, 3) == 0
E   assert -1 == 0
=========================== short test summary info ============================
FAILED tests/test_geo.py::test_area - assert 5 == 6
FAILED tests/test_geo.py::test_zero - assert -1 == 0
2 failed, 3 passed in 0.05s
"""


def _context(tmp_path: Path) -> ToolContext:
    (tmp_path / "geo.py").write_text(MODULE)
    return ToolContext(root=tmp_path, overlay=Overlay(tmp_path))


def _execute(registry, name: str, ctx: ToolContext, **arguments: object):
    return asyncio.run(registry.execute(name, arguments, ctx))


def test_an_edit_that_introduces_an_undefined_name_is_reported(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    registry = default_registry()
    assert add_edit_diagnostics(registry) == ["edit_file", "write_file"]
    result = _execute(
        registry, "edit_file", ctx, path="geo.py", old_text="width * height", new_text="width * heigth"
    )
    assert result.ok
    assert "Warning: after this edit geo.py has undefined names:" in result.output
    assert "- line 5: undefined name 'heigth'" in result.output
    assert (tmp_path / "geo.py").read_text() == MODULE  # the check reads the proposal, the disk is untouched


def test_a_clean_edit_says_so_and_old_problems_are_not_blamed_on_it(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    ctx.overlay.write_text("geo.py", MODULE + "\n\ndef broken():\n    return missing\n")
    registry = default_registry()
    add_edit_diagnostics(registry)
    result = _execute(
        registry, "edit_file", ctx, path="geo.py", old_text="width * height", new_text="height * width"
    )
    assert result.ok and "Check of geo.py: parses, no new undefined names." in result.output
    assert "missing" not in result.output


def test_a_syntax_error_is_left_to_the_edit_tool_and_other_files_are_not_checked(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    registry = default_registry()
    add_edit_diagnostics(registry)
    broken = _execute(
        registry, "edit_file", ctx, path="geo.py", old_text="    return", new_text="    return ("
    )
    assert broken.ok and "Check of" not in broken.output and "undefined" not in broken.output
    text = _execute(registry, "write_file", ctx, path="notes.txt", content="hello\n")
    assert text.ok and "Check of" not in text.output


def test_new_problems_compares_by_message_not_line() -> None:
    before = "def f():\n    return x\n"
    after = "\n\ndef f():\n    return x + y\n"
    assert new_problems("m.py", before, after) == [(4, "undefined name 'y'")]
    assert new_problems("m.py", None, "z\n") == [(1, "undefined name 'z'")]


def test_pytest_output_is_condensed_to_counts_failures_and_the_first_traceback() -> None:
    report = condense_pytest(PYTEST_OUTPUT, "python -m pytest tests/test_geo.py")
    assert not report.passed and report.counts == "2 failed, 3 passed"
    assert report.failed == ["tests/test_geo.py::test_area", "tests/test_geo.py::test_zero"]
    assert "assert 5 == 6" in report.first_failure and "test_zero" not in report.first_failure
    details = report.details()
    assert details.startswith("`python -m pytest tests/test_geo.py`: 2 failed, 3 passed")
    assert "Failing: tests/test_geo.py::test_area, tests/test_geo.py::test_zero" in details
    passing = condense_pytest("....\n4 passed in 0.01s\n", "python -m pytest")
    assert passing.passed and passing.counts == "4 passed" and not passing.failed


def test_paths_named_in_a_task_are_split_into_tests_and_sources(tmp_path: Path) -> None:
    for rel in ("tests/test_x.py", "src/pkg/y.py", "test_inflection.py", "inflection/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    exists = Overlay(tmp_path).is_file
    task = (
        "The tests in tests/test_x.py fail since the last change to src/pkg/y.py; fix it. Run them with "
        "`python -m pytest tests/test_x.py`. Also test_inflection.py::test_camelize and inflection/__init__.py, "
        "but not missing/z.py."
    )
    assert named_test_files(task, exists) == ["tests/test_x.py", "test_inflection.py::test_camelize"]
    assert named_source_files(task, exists) == ["src/pkg/y.py", "inflection/__init__.py"]


def test_paths_a_task_names_outside_the_workspace_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside.py").write_text("x = 1\n")
    (tmp_path / "test_outside.py").write_text("def test_x(): pass\n")
    overlay = Overlay(tmp_path / "proj")
    task = "fix ../outside.py so that ../test_outside.py passes, and /etc/passwd.py too"
    assert named_source_files(task, overlay.is_file) == []
    assert named_test_files(task, overlay.is_file) == []


def test_lenient_edit_drops_line_number_prefixes_and_fixes_one_line_indentation(tmp_path: Path) -> None:
    from lsp_agent.tools.lenient_edit import make_edits_lenient

    ctx = _context(tmp_path)
    registry = default_registry()
    add_edit_diagnostics(registry)
    assert make_edits_lenient(registry)
    numbered = _execute(
        registry,
        "edit_file",
        ctx,
        path="geo.py",
        old_text="4: def area(width, height):\n5:     return width * height",
        new_text="4: def area(width, height):\n5:     return height * width",
    )
    assert numbered.ok and "line-number prefixes in old_text/new_text were left out" in numbered.output
    assert ctx.overlay.read_text("geo.py") == MODULE.replace("width * height", "height * width")
    assert "Check of geo.py" in numbered.output  # the diagnostics still run
    plain = _execute(
        registry,
        "edit_file",
        ctx,
        path="geo.py",
        old_text="return height * width",
        new_text="return width + height",
    )
    assert plain.ok and "Note:" not in plain.output  # a substring of the line matches as it is
    assert ctx.overlay.read_text("geo.py").endswith("    return width + height\n")
    indented = _execute(
        registry, "edit_file", ctx, path="geo.py", old_text="        import os", new_text="import sys"
    )
    assert indented.ok and "apart from its indentation" in indented.output
    assert ctx.overlay.read_text("geo.py").startswith("import sys\n")
    missing = _execute(registry, "edit_file", ctx, path="geo.py", old_text="12: return nothing", new_text="x")
    assert not missing.ok and "old_text was not found in geo.py" in missing.output
