"""edit_file: exact single replacement, and failures that say why and show the closest candidates."""

from __future__ import annotations


def test_edit_replaces_exactly_once_and_shows_the_result(ctx, call, workspace):
    res = call(
        ctx,
        "edit_file",
        path="src/app.py",
        old_text='    return f"hello {name}"',
        new_text='    return f"hi {name}"',
    )
    assert res.ok
    assert res.output.startswith("Edited src/app.py: replaced 1 line at line 7 with 1 line.")
    assert '\n7:     return f"hi {name}"\n' in res.output
    assert 'return f"hi {name}"' in ctx.overlay.read_text("src/app.py")
    assert 'return f"hello {name}"' in (workspace / "src/app.py").read_text()  # disk untouched
    # a second edit builds on the first
    assert call(ctx, "edit_file", path="src/app.py", old_text='f"hi {name}"', new_text='f"hey {name}"').ok
    assert 'f"hey {name}"' in ctx.overlay.read_text("src/app.py")


def test_edit_not_found_shows_closest_candidates(ctx, call):
    res = call(
        ctx,
        "edit_file",
        path="src/app.py",
        old_text="def greet(nme):\n    return f'hello {name}'",
        new_text="def greet(name):\n    return 'x'",
    )
    assert not res.ok
    assert "old_text was not found in src/app.py" in res.output
    assert "Lines 6-7 (" in res.output
    assert '6: def greet(name):\n7:     return f"hello {name}"' in res.output
    assert ctx.overlay.changed_paths() == []


def test_edit_whitespace_only_difference_is_named(ctx, call):
    res = call(ctx, "edit_file", path="src/pkg/util.py", old_text="def helper():\n  return 42", new_text="x")
    assert not res.ok
    assert "Lines 1-2 (" in res.output and "differs only in whitespace" in res.output


def test_edit_with_line_number_prefixes_gets_a_hint(ctx, call):
    res = call(
        ctx, "edit_file", path="src/pkg/util.py", old_text="1: def helper():\n2:     return 42", new_text="x"
    )
    assert not res.ok
    assert "line-number prefixes" in res.output
    assert "Lines 1-2 (100% similar" in res.output


def test_edit_without_any_similar_lines(ctx, call):
    res = call(ctx, "edit_file", path="src/pkg/util.py", old_text="zzzzqqqq", new_text="x")
    assert not res.ok and "No similar lines were found" in res.output


def test_edit_multiple_matches_lists_lines(ctx, call, workspace):
    (workspace / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    res = call(ctx, "edit_file", path="dup.py", old_text="x = 1", new_text="x = 3")
    assert not res.ok
    assert "old_text matches 2 places in dup.py (starting at lines 1, 3)" in res.output
    assert "include more surrounding lines" in res.output


def test_edit_overlapping_matches_count_as_ambiguous(ctx, call, workspace):
    (workspace / "aaa.txt").write_text("aaa\n")
    res = call(ctx, "edit_file", path="aaa.txt", old_text="aa", new_text="b")
    assert not res.ok and "matches 2 places" in res.output


def test_edit_identical_and_empty_old_text(ctx, call):
    same = call(ctx, "edit_file", path="src/pkg/util.py", old_text="42", new_text="42")
    assert not same.ok and "identical" in same.output
    empty = call(ctx, "edit_file", path="src/pkg/util.py", old_text="", new_text="x")
    assert not empty.ok and "old_text is empty" in empty.output


def test_edit_tolerates_only_crlf_versus_lf(ctx, call, workspace):
    (workspace / "dos.py").write_bytes(b"def a():\r\n    return 1\r\n")
    res = call(
        ctx, "edit_file", path="dos.py", old_text="def a():\n    return 1", new_text="def a():\n    return 2"
    )
    assert res.ok
    assert ctx.overlay.read_text("dos.py") == "def a():\r\n    return 2\r\n"
    (workspace / "unix.py").write_bytes(b"a = 1\nb = 2\n")
    res = call(ctx, "edit_file", path="unix.py", old_text="a = 1\r\nb = 2", new_text="a = 1\r\nb = 3")
    assert res.ok
    assert ctx.overlay.read_text("unix.py") == "a = 1\nb = 3\n"


def test_edit_missing_file_and_syntax_warning(ctx, call):
    missing = call(ctx, "edit_file", path="nope.py", old_text="a", new_text="b")
    assert not missing.ok and "file not found" in missing.output
    broken = call(ctx, "edit_file", path="src/pkg/util.py", old_text="return 42", new_text="return (42")
    assert broken.ok and "Warning: syntax error: src/pkg/util.py:2:" in broken.output


def test_edit_candidates_stay_fast_on_a_large_file(ctx, call, workspace):
    body = "".join(f"def function_{i}(arg):\n    return arg * {i}\n\n" for i in range(3000))
    (workspace / "big.py").write_text(body)
    res = call(
        ctx,
        "edit_file",
        path="big.py",
        old_text="def function_1500(arg):\n    return arg * 1501",
        new_text="x",
    )
    assert not res.ok
    assert "Lines 4501-4502" in res.output
    assert res.seconds < 5.0  # generous: a regression to quadratic matching would take minutes
