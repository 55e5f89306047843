"""list_files, read_file, get_file_info, write_file, delete_file and task_complete through the registry."""

from __future__ import annotations

import threading
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

# ----- list_files ---------------------------------------------------------------------------------------------


def test_list_files_without_pattern_lists_direct_entries_sorted_and_ignores(ctx, call):
    res = call(ctx, "list_files")
    assert res.ok
    assert res.output.splitlines() == [".gitignore", "README.md", "docs/", "src/"]


def test_list_files_recursive_glob_and_path(ctx, call):
    assert call(ctx, "list_files", pattern="**/*.py").output.splitlines() == [
        "src/app.py",
        "src/pkg/__init__.py",
        "src/pkg/util.py",
    ]
    # relative to `path`, results stay relative to the root
    assert call(ctx, "list_files", pattern="*.py", path="src/pkg").output.splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/util.py",
    ]
    assert call(ctx, "list_files", path="src").output.splitlines() == ["src/app.py", "src/pkg/"]
    assert call(ctx, "list_files", pattern="src/**").output.splitlines() == [
        "src/app.py",
        "src/pkg/",
        "src/pkg/__init__.py",
        "src/pkg/util.py",
    ]
    assert call(ctx, "list_files", pattern="**/*.{md,py}", path="docs").output == "docs/guide.md"
    assert call(ctx, "list_files", pattern="src/pkg/[u]til.py").output == "src/pkg/util.py"
    # a plain directory name as the pattern lists that directory
    assert call(ctx, "list_files", pattern="src/pkg").output == "src/pkg/__init__.py\nsrc/pkg/util.py"


def test_list_files_no_match_hints_at_recursive_glob(ctx, call):
    res = call(ctx, "list_files", pattern="*.py")
    assert res.ok
    assert "No files match '*.py'" in res.output and "'**/*.py'" in res.output


def test_list_files_sees_overlay_creations_and_hides_deletions(ctx, call):
    assert call(ctx, "write_file", path="new/deep/mod.py", content="x = 1\n").ok
    assert call(ctx, "delete_file", path="src/pkg/util.py").ok
    assert call(ctx, "list_files", pattern="**/*.py").output.splitlines() == [
        "new/deep/mod.py",
        "src/app.py",
        "src/pkg/__init__.py",
    ]
    assert "new/" in call(ctx, "list_files").output.splitlines()
    assert call(ctx, "list_files", path="new").output == "new/deep/"


def test_list_files_truncation_marker_and_exact_limit(make_ctx, call, tmp_path):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}.txt").write_text("x\n")
    over = call(make_ctx(root, list_max_items=3), "list_files")
    assert over.output.splitlines() == ["f0.txt", "f1.txt", "f2.txt", "[TRUNCATED: first 3 items]"]
    exact = call(make_ctx(root, list_max_items=5), "list_files")
    assert exact.output.splitlines() == [f"f{i}.txt" for i in range(5)]
    assert "TRUNCATED" not in exact.output


def test_list_files_errors_for_file_and_missing_dir(ctx, call):
    res = call(ctx, "list_files", path="README.md")
    assert not res.ok and "is a file, not a directory" in res.output
    res = call(ctx, "list_files", path="nope")
    assert not res.ok and "directory not found" in res.output


# ----- read_file ----------------------------------------------------------------------------------------------


def test_read_file_numbers_lines_from_one(ctx, call):
    res = call(ctx, "read_file", path="src/pkg/util.py")
    assert res.ok
    assert res.output == "1: def helper():\n2:     return 42"


def test_read_file_range_and_string_integers(ctx, call):
    res = call(ctx, "read_file", {"path": "src/app.py", "start_line": "6", "end_line": 7})
    assert res.ok
    assert res.output.splitlines() == ["6: def greet(name):", '7:     return f"hello {name}"']
    # end past the end is clamped, -1 means the end
    assert call(ctx, "read_file", path="src/app.py", start_line=11, end_line=99).output.startswith("11:")
    assert call(ctx, "read_file", path="src/app.py", start_line=12, end_line=-1).output.startswith("12:")


def test_read_file_truncation_marker_and_exact_limit(make_ctx, call, workspace):
    (workspace / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    res = call(make_ctx(read_max_lines=4), "read_file", path="long.txt")
    lines = res.output.splitlines()
    assert lines[:4] == ["1: line 1", "2: line 2", "3: line 3", "4: line 4"]
    assert lines[-1] == "[TRUNCATED: showing first 4 lines, 6 more available]"
    assert len(lines) == 5
    ranged = call(make_ctx(read_max_lines=4), "read_file", path="long.txt", start_line=3, end_line=9)
    assert ranged.output.splitlines()[-1] == "[TRUNCATED: showing first 4 lines, 3 more available]"
    assert ranged.output.splitlines()[0].strip() == "3: line 3"
    exact = call(make_ctx(read_max_lines=10), "read_file", path="long.txt")
    assert "TRUNCATED" not in exact.output and exact.output.splitlines()[-1] == "10: line 10"


def test_read_file_invalid_ranges_are_clear_errors(ctx, call):
    cases = [
        ({"start_line": 0}, "start_line must be 1 or more"),
        ({"start_line": 50}, "past the end of src/app.py, which has 12 lines"),
        ({"start_line": 5, "end_line": 3}, "end_line 3 is before start_line 5"),
        ({"end_line": -5}, "end_line must be 1 or more"),
        ({"start_line": "two"}, "'start_line' must be an integer"),
    ]
    for extra, expected in cases:
        res = call(ctx, "read_file", {"path": "src/app.py", **extra})
        assert not res.ok, extra
        assert expected in res.output, (extra, res.output)


def test_read_file_missing_directory_binary_huge_and_empty(make_ctx, call, workspace):
    (workspace / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (workspace / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (workspace / "big.txt").write_text("x" * 5000)
    (workspace / "empty.txt").write_text("")
    ctx = make_ctx(max_file_size=1000)
    expectations = {
        "missing.py": "file not found",
        "src": "is a directory",
        ".": "workspace root",
        "blob.bin": "binary",
        "latin1.txt": "binary (or non-UTF-8)",
        "big.txt": "5,000 bytes, over the 1,000-byte limit",
    }
    for path, expected in expectations.items():
        res = call(ctx, "read_file", path=path)
        assert not res.ok, path
        assert res.output.startswith("Error: ") and expected in res.output, (path, res.output)
    assert call(ctx, "read_file", path="empty.txt").output == "(empty.txt is empty)"
    assert (workspace / "big.txt").stat().st_size == 5000  # nothing lost


def test_read_file_cuts_very_long_lines(make_ctx, call, workspace):
    (workspace / "wide.txt").write_text("a" * 50 + "\n")
    res = call(make_ctx(read_max_line_chars=10), "read_file", path="wide.txt")
    assert res.output == "1: aaaaaaaaaa … [line cut at 10 of 50 chars]"


def test_read_file_crlf_lines_have_no_carriage_returns(ctx, call, workspace):
    (workspace / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert call(ctx, "read_file", path="dos.txt").output == "1: one\n2: two"


# ----- get_file_info ------------------------------------------------------------------------------------------


def test_get_file_info_for_disk_overlay_and_directory(ctx, call, workspace):
    info = call(ctx, "get_file_info", path="src/app.py").output
    assert "type: file" in info and "language: python" in info and "lines: 12" in info
    assert f"size: {(workspace / 'src/app.py').stat().st_size} bytes" in info
    assert "state: unchanged in this run" in info
    call(ctx, "edit_file", path="src/app.py", old_text='"you"', new_text='"someone"')
    assert "state: modified in this run" in call(ctx, "get_file_info", path="src/app.py").output
    call(ctx, "write_file", path="notes.txt", content="a\nb\n")
    created = call(ctx, "get_file_info", path="notes.txt").output
    assert "state: created in this run" in created and "lines: 2" in created and "size: 4 bytes" in created
    call(ctx, "delete_file", path="README.md")
    assert "deleted in this run" in call(ctx, "get_file_info", path="README.md").output
    directory = call(ctx, "get_file_info", path="src").output
    assert "type: directory" in directory and "entries: 2" in directory and "files_below: 3" in directory


def test_get_file_info_binary_and_missing(ctx, call, workspace):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x00\x00")
    info = call(ctx, "get_file_info", path="img.png")
    assert info.ok and "binary: yes" in info.output
    missing = call(ctx, "get_file_info", path="ghost.txt")
    assert not missing.ok and "not found" in missing.output


# ----- write_file / delete_file / task_complete ---------------------------------------------------------------


def test_write_file_goes_to_overlay_only_and_later_reads_see_it(ctx, call, workspace):
    res = call(ctx, "write_file", path="pkg2/sub/new.py", content="def f():\n    return 1\n")
    assert res.ok and res.output == "Created pkg2/sub/new.py (2 lines)."
    assert not (workspace / "pkg2").exists()
    assert call(ctx, "read_file", path="pkg2/sub/new.py").output == "1: def f():\n2:     return 1"
    res = call(ctx, "write_file", path="README.md", content="New readme\nline two\n")
    assert res.output == "Wrote README.md (2 lines, previously 1 line)."
    assert (workspace / "README.md").read_text() == "Hello project\n"
    assert ctx.overlay.changed_paths() == ["README.md", "pkg2/sub/new.py"]


def test_write_file_reports_python_syntax_errors_immediately(ctx, call):
    res = call(ctx, "write_file", path="broken.py", content="def f(:\n    pass\n")
    assert res.ok
    assert "Warning: syntax error: broken.py:1:" in res.output


def test_write_file_refusals(ctx, call, workspace):
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    cases = {
        "../outside.txt": "outside the workspace root",
        "/tmp/elsewhere.txt": "outside the workspace root",
        ".git/config": "inside .git/",
        "src": "is a directory",
        "README.md/child.txt": "parent README.md is a file",
        "blob.bin": "binary",
    }
    for path, expected in cases.items():
        res = call(ctx, "write_file", path=path, content="x")
        assert not res.ok, path
        assert expected in res.output, (path, res.output)
    assert (workspace / "blob.bin").read_bytes() == b"\x00\x01binary"
    assert ctx.overlay.changed_paths() == []


def test_write_file_keeps_crlf_line_endings(ctx, call, workspace):
    (workspace / "dos.txt").write_bytes(b"a\r\nb\r\n")
    assert call(ctx, "write_file", path="dos.txt", content="a\nc\n").ok
    assert ctx.overlay.read_text("dos.txt") == "a\r\nc\r\n"


def test_delete_file_hides_file_and_keeps_disk(ctx, call, workspace):
    res = call(ctx, "delete_file", path="docs/guide.md")
    assert res.ok and res.output == "Deleted docs/guide.md."
    assert (workspace / "docs/guide.md").exists()
    again = call(ctx, "read_file", path="docs/guide.md")
    assert not again.ok and "deleted earlier in this run" in again.output
    assert not call(ctx, "delete_file", path="docs/guide.md").ok
    assert not call(ctx, "delete_file", path="docs").ok
    missing = call(ctx, "delete_file", path="nope.txt")
    assert not missing.ok and "file not found" in missing.output
    proposal = ctx.overlay.to_proposal()
    assert [(c.path, c.kind) for c in proposal.changes] == [("docs/guide.md", "delete")]


def test_delete_of_created_file_leaves_no_change(ctx, call):
    call(ctx, "write_file", path="tmp.txt", content="x\n")
    assert call(ctx, "delete_file", path="tmp.txt").ok
    assert ctx.overlay.changed_paths() == []


def test_task_complete_returns_summary(ctx, call):
    res = call(ctx, "task_complete", summary="  Renamed greet.  ")
    assert res.ok and res.output == "Renamed greet."


def test_symlink_inside_root_is_followed_to_its_target(ctx, call, workspace):
    (workspace / "alias.py").symlink_to(workspace / "src/pkg/util.py")
    assert call(ctx, "read_file", path="alias.py").output.startswith("1: def helper")
    assert call(ctx, "edit_file", path="alias.py", old_text="42", new_text="43").ok
    assert ctx.overlay.changed_paths() == ["src/pkg/util.py"]


def test_dot_segments_and_absolute_paths_inside_root_are_accepted(ctx, call, workspace: Path):
    assert call(ctx, "read_file", path="./src/../src/pkg/util.py").ok
    assert call(ctx, "read_file", path=str(workspace / "src/pkg/util.py")).ok  # absolute inside the root


def test_walking_tools_stop_when_the_run_is_cancelled(ctx, call):
    ctx.cancel = threading.Event()
    ctx.cancel.set()
    for name, args in (("list_files", {"pattern": "**/*"}), ("search_text", {"pattern": "greet"})):
        res = call(ctx, name, args)
        assert not res.ok and "cancelled" in res.output


def test_file_size_limit_comes_from_settings(workspace, call):
    (workspace / "mid.txt").write_text("y" * 300)
    ctx = ToolContext(root=workspace, overlay=Overlay(workspace), settings=Settings(max_file_size=200))
    res = call(ctx, "read_file", path="mid.txt")
    assert not res.ok and "300 bytes, over the 200-byte limit" in res.output
