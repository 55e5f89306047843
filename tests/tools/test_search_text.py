"""search_text: literal and regex search over the run's view, snippets, limits and markers."""

from __future__ import annotations

import re

from lsp_agent.tools.search import snippet


def test_literal_search_is_path_line_snippet_sorted_and_honours_ignores(ctx, call):
    res = call(ctx, "search_text", pattern="greet")
    assert res.ok
    assert res.output.splitlines() == [
        "docs/guide.md:3:Call greet to say hello.",
        "src/app.py:6:def greet(name):",
        "src/app.py:10:class Greeter:",
        'src/app.py:12:return greet(os.environ.get("USER", "you"))',
    ]  # smart case; build/ and *.log are gitignored, .hidden/ is hidden


def test_regex_and_literal_modes(ctx, call):
    res = call(ctx, "search_text", pattern=r"def \w+\(", regex=True)
    assert [line.split(":")[0:2] for line in res.output.splitlines()] == [
        ["src/app.py", "6"],
        ["src/app.py", "11"],
        ["src/pkg/util.py", "1"],
    ]
    literal = call(ctx, "search_text", pattern=r"def \w+\(")
    assert literal.ok and literal.output.startswith("No matches")
    assert "regex=true" in literal.output


def test_case_sensitivity_options(ctx, call):
    smart_lower = call(ctx, "search_text", pattern="hello", path="README.md")
    assert smart_lower.output == "README.md:1:Hello project"  # all-lowercase pattern ignores case
    smart_upper = call(ctx, "search_text", pattern="HELLO", path="README.md")
    assert smart_upper.output.startswith("No matches") and "case_sensitive=false" in smart_upper.output
    forced = call(ctx, "search_text", pattern="HELLO", path="README.md", case_sensitive=False)
    assert forced.output == "README.md:1:Hello project"
    strict = call(ctx, "search_text", pattern="hello", path="README.md", case_sensitive="true")
    assert strict.output.startswith("No matches")


def test_path_restricts_to_directory_or_file(ctx, call):
    assert call(ctx, "search_text", pattern="return", path="src/pkg").output == "src/pkg/util.py:2:return 42"
    assert call(ctx, "search_text", pattern="greet", path="docs/guide.md").output.startswith(
        "docs/guide.md:3:"
    )
    missing = call(ctx, "search_text", pattern="x", path="nowhere")
    assert not missing.ok and "nowhere: not found; give a directory or file" in missing.output


def test_searches_the_overlay_view_not_stale_disk(ctx, call, workspace):
    call(ctx, "edit_file", path="src/pkg/util.py", old_text="return 42", new_text="return answer_value")
    call(ctx, "write_file", path="src/extra.py", content="answer_value = 42\n")
    call(ctx, "delete_file", path="docs/guide.md")
    res = call(ctx, "search_text", pattern="answer_value")
    assert res.output.splitlines() == [
        "src/extra.py:1:answer_value = 42",
        "src/pkg/util.py:2:return answer_value",
    ]
    assert call(ctx, "search_text", pattern="return 42").output.startswith("No matches")
    assert "docs/guide.md" not in call(ctx, "search_text", pattern="greet").output
    assert "return 42" in (workspace / "src/pkg/util.py").read_text()


def test_truncation_marker_only_when_more_matches_remain(make_ctx, call, tmp_path):
    root = tmp_path / "hits"
    root.mkdir()
    (root / "a.txt").write_text("hit 1\nhit 2\n")
    (root / "b.txt").write_text("hit 3\nnothing\n")
    (root / "c.txt").write_text("nothing here\n")
    over = call(make_ctx(root, search_max_results=2), "search_text", pattern="hit")
    assert over.output.splitlines() == [
        "a.txt:1:hit 1",
        "a.txt:2:hit 2",
        "[TRUNCATED: reached limit 2 before completing search]",
    ]
    exact = call(make_ctx(root, search_max_results=3), "search_text", pattern="hit")
    assert exact.output.splitlines() == ["a.txt:1:hit 1", "a.txt:2:hit 2", "b.txt:1:hit 3"]
    assert "TRUNCATED" not in exact.output


def test_invalid_regex_is_a_clear_error(ctx, call):
    res = call(ctx, "search_text", pattern="def (", regex=True)
    assert not res.ok
    assert "invalid regular expression 'def ('" in res.output and "regex=false" in res.output
    assert not call(ctx, "search_text", pattern="").ok


def test_binary_and_huge_files_are_skipped_in_a_walk_but_named_when_explicit(make_ctx, call, workspace):
    (workspace / "blob.bin").write_bytes(b"greet\x00\x01")
    (workspace / "huge.txt").write_text("greet\n" * 400)
    ctx = make_ctx(max_file_size=1000)
    res = call(ctx, "search_text", pattern="greet")
    assert "blob.bin" not in res.output and "huge.txt" not in res.output
    direct = call(ctx, "search_text", pattern="greet", path="blob.bin")
    assert not direct.ok and "binary" in direct.output


def test_snippets_are_cut_at_100_chars_and_keep_the_match(ctx, call, workspace):
    long_line = "x = '" + "a" * 150 + "NEEDLE" + "b" * 150 + "'"
    (workspace / "wide.py").write_text("    " + long_line + "\n")
    out = call(ctx, "search_text", pattern="NEEDLE").output
    snippet_text = out.split(":", 2)[2]
    assert len(snippet_text) == 100 and "NEEDLE" in snippet_text
    assert snippet_text.startswith("…") and snippet_text.endswith("…")
    early = "NEEDLE " + "z" * 200
    match = re.search("NEEDLE", early)
    cut = snippet(early, match, 100)
    assert len(cut) == 100 and cut.startswith("NEEDLE") and cut.endswith("…")


def test_regex_anchors_work_per_line(ctx, call, workspace):
    (workspace / "anchors.txt").write_text("alpha\nbeta\nalphabet\n")
    assert (
        call(ctx, "search_text", pattern=r"^alpha$", regex=True, path="anchors.txt").output
        == "anchors.txt:1:alpha"
    )
    assert (
        call(ctx, "search_text", pattern=r"\Abeta", regex=True, path="anchors.txt").output
        == "anchors.txt:2:beta"
    )
    assert (
        call(ctx, "search_text", pattern=r"alpha(?!bet)", regex=True, path="anchors.txt").output
        == "anchors.txt:1:alpha"
    )
