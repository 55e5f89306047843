"""SEARCH/REPLACE edit blocks as small models write them, replies cut after their first action, loose matching."""

from __future__ import annotations

import pytest

from lsp_agent.agent.model.edit_blocks import close_cut_block, parse_edit_block
from lsp_agent.agent.model.parsing import first_action_only
from lsp_agent.tools.lenient_edit import loose_match

BLOCK = "<<<<<<< SEARCH\n    if a > b:\n=======\n    if a >= b:\n>>>>>>> REPLACE"


@pytest.mark.parametrize(
    ("before", "path", "thought"),
    [
        ("<THOUGHT>off by one</THOUGHT>\npkg/mod.py\n", "pkg/mod.py", "off by one"),
        ("THOUGHT: off by one\n```python\n### pkg/mod.py\n", "pkg/mod.py", "off by one"),
        ("THOUGHT>off by one</THOUGHT>\n`pkg/mod.py`:\n", "pkg/mod.py", "off by one"),
        ("File: src/x.py\n", "src/x.py", ""),
        (
            "The bug is in pkg/mod.py where the comparison is wrong.\n",
            "",
            "The bug is in pkg/mod.py where the",
        ),
    ],
)
def test_a_block_becomes_an_edit_file_call_with_the_path_line_before_it(before, path, thought) -> None:
    found = parse_edit_block(before + BLOCK + "\n```\nAll tests pass now.")
    assert found is not None
    said, call = found
    assert call.name == "edit_file"
    assert call.arguments == {"path": path, "old_text": "    if a > b:", "new_text": "    if a >= b:"}
    assert said.startswith(thought)


def test_a_block_cut_by_the_stop_sequence_is_parsed_and_closed_for_the_history() -> None:
    cut = "pkg/mod.py\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n"
    _, call = parse_edit_block(cut)
    assert call.arguments["new_text"] == "    x = 2"
    closed = close_cut_block(cut)
    assert closed.endswith("    x = 2\n>>>>>>> REPLACE") and close_cut_block(closed) == closed
    empty = parse_edit_block("a.py\n<<<<<<< SEARCH\n    del x\n=======\n>>>>>>> REPLACE")[1]
    assert empty.arguments["new_text"] == ""  # a deletion


def test_no_block_or_an_action_first_is_not_an_edit() -> None:
    assert parse_edit_block("just text, no edit") is None
    action = '<ACTION>{"name": "read_file", "arguments": {"path": "a.py"}}</ACTION>\n' + BLOCK
    assert parse_edit_block(action) is None


def test_only_the_first_action_is_kept() -> None:
    action = '<ACTION>{"name": "read_file", "arguments": {}}</ACTION>\nThe output is: 42'
    assert first_action_only(action) == '<ACTION>{"name": "read_file", "arguments": {}}</ACTION>'
    assert first_action_only(BLOCK + "\nI ran the tests: they pass.\n" + BLOCK) == BLOCK
    escaped = "&lt;ACTION&gt;{}&lt;/ACTION&gt; then more"
    assert first_action_only(escaped) == "&lt;ACTION&gt;{}&lt;/ACTION&gt;"
    assert first_action_only("no action at all") == "no action at all"


def test_loose_match_finds_lines_apart_from_indentation_and_moves_the_new_text() -> None:
    text = "def f(a, b):\n    if a > b:\n        return a\n    return b\n"
    old, new = loose_match(text, "if a > b:\n    return a", "if a >= b:\n    return a")
    assert old == "    if a > b:\n        return a"
    assert new == "    if a >= b:\n        return a"
    assert loose_match(text, "    if a > b:", "x") is None  # exact already: nothing to repair
    assert loose_match(text + "    if a > b:\n", "if a > b:", "x") is None  # two places: ambiguous
    assert loose_match(text, "if a < b:", "x") is None


def test_code_copied_as_shown_up_front_gets_its_prefixes_and_docstring_back() -> None:
    from lsp_agent.tools.lenient_edit import from_shown_code

    file_lines = ["def f(n):", '    """Doc', "    more", '    """', "    return {1: 'a'}.get(n)"]
    shown = '1: def f(n):\n2:     """Doc\n3-4: [docstring, 2 more lines]\n5:     return {1: \'a\'}.get(n)'
    assert from_shown_code(shown, file_lines, check=True) == "\n".join(file_lines)
    assert (
        from_shown_code("            1: 'st',", file_lines, check=True) is None
    )  # a dict literal, not a prefix
    assert from_shown_code("5:     return 0", file_lines, check=False) == "    return 0"
    assert from_shown_code("plain text", file_lines, check=False) is None


ORDINAL = 'def ordinal(number):\n    n = abs(number)\n    if n % 100 in (11, 12, 13):\n        return "th"\n    return "x"\n'


def lenient_edit(tmp_path, text: str):
    """The small profile's forgiving edit_file over a real overlay of one file, pkg/mod.py holding `text`."""
    from lsp_agent.tools.lenient_edit import make_edits_lenient
    from lsp_agent.tools.registry import ToolContext, default_registry
    from lsp_agent.workspace.overlay import Overlay

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(text)
    registry = default_registry()
    assert make_edits_lenient(registry)
    ctx = ToolContext(root=tmp_path, overlay=Overlay(tmp_path))
    edit = registry.get("edit_file").function
    return ctx, lambda old, new: edit(ctx, path="pkg/mod.py", old_text=old, new_text=new)


def test_one_line_matched_inside_a_deeper_line_gets_the_new_lines_at_its_depth(tmp_path) -> None:
    ctx, edit = lenient_edit(tmp_path, ORDINAL)
    output = edit('    return "th"', '    if number < 0:\n        return "-th"\n    return "th"')
    assert "indented to the depth of the line old_text matched" in output
    assert ctx.overlay.read_text("pkg/mod.py") == ORDINAL.replace(
        '        return "th"\n', '        if number < 0:\n            return "-th"\n        return "th"\n'
    )
    assert (tmp_path / "pkg" / "mod.py").read_text() == ORDINAL  # the proposal only


def test_traceback_lines_and_miscounted_line_numbers_are_left_out(tmp_path) -> None:
    ctx, edit = lenient_edit(tmp_path, ORDINAL)
    copied = "    n = abs(number)\n        ^^^^^^^^^^^\nE   TypeError: bad operand\n    if n % 100 in (11, 12, 13):"
    output = edit(copied, "    n = abs(number)\n    if n % 100 in (11, 12):")
    assert "traceback lines (^^^^, E ...)" in output
    assert "in (11, 12):" in ctx.overlay.read_text("pkg/mod.py")
    output = edit('7:     return "x"', '7:     return "st"')  # the model counted wrong: line 5, not 7
    assert "line-number prefixes" in output and ctx.overlay.read_text("pkg/mod.py").endswith('return "st"\n')


def test_changed_numbered_lines_are_an_edit_against_the_file_they_agree_with() -> None:
    from lsp_agent.agent.repair.listing_edits import listing_edit

    files = {"pkg/mod.py": ORDINAL, "pkg/other.py": "x = 1\n"}
    reply = (
        "Here is the corrected function:\npkg/mod.py\n```python\n"
        "1: def ordinal(number):\n2: n = abs(number)\n3:     if n % 100 in (11, 12, 13, 14):\n"
        '4:         return "th"\n5: ```\n```'
    )
    call = listing_edit(reply, files.get, ["pkg/other.py"])
    assert call is not None and call.name == "edit_file" and call.arguments["path"] == "pkg/mod.py"
    # only the changed line, at the file's indentation (line 2's lost spacing and the fence line are no change)
    assert call.arguments == {
        "path": "pkg/mod.py",
        "old_text": "    if n % 100 in (11, 12, 13):",
        "new_text": "    if n % 100 in (11, 12, 13, 14):",
    }
    # the same line twice in the file: widened with unchanged lines until it matches one place
    twice = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"
    call = listing_edit("5: def b():\n6:     return 2", {"m.py": twice}.get, ["m.py"])
    assert call.arguments["old_text"] == "def b():\n    return 1"
    assert call.arguments["new_text"] == "def b():\n    return 2"
    # not a listing of the file, or nothing changed
    assert listing_edit("1: first point\n2: second point", files.get, ["pkg/mod.py"]) is None
    assert listing_edit("1: def ordinal(number):\n2:     n = abs(number)", files.get, ["pkg/mod.py"]) is None
    assert listing_edit("4:         return 'st'", files.get, ["pkg/mod.py"]) is None  # one line is no listing


def test_a_block_with_its_search_marker_written_as_a_divider_is_read() -> None:
    reply = "<THOUGHT>bound</THOUGHT>\npkg/mod.py\n=======\n    if a > b:\n=======\n    if a >= b:\n>>>>>> REPLACE\nmore"
    thought, call = parse_edit_block(reply)
    assert thought == "bound"
    assert call.arguments == {"path": "pkg/mod.py", "old_text": "    if a > b:", "new_text": "    if a >= b:"}
    assert parse_edit_block("Results\n=======\nall good") is None  # one divider is no block


def test_old_text_found_in_several_places_edits_the_one_shown_to_the_model(tmp_path) -> None:
    from lsp_agent.tools.lenient_edit import SHOWN_CODE, one_place

    text = "def a(key):\n    if key not in data:\n        return 1\n\n\ndef b(key):\n    if key not in data:\n        return 2\n"
    old, new = one_place(text, "if key not in data:", "if key in data:", [(6, 8)])
    assert old == "def b(key):\n    if key not in data:\n        return 2\n"  # widened until it is unique
    assert new == "def b(key):\n    if key in data:\n        return 2\n"
    assert one_place(text, "if key not in data:", "x", [(1, 8)]) is None  # both shown: still ambiguous
    assert one_place(text, "return 1", "x", [(1, 3)]) is None  # one place only: nothing to repair
    ctx, edit = lenient_edit(tmp_path, text)
    ctx.extras[SHOWN_CODE] = {"pkg/mod.py": [(1, 3)]}
    output = edit("    if key not in data:", "    if key in data:")
    assert "old_text matched several places; the one in the code shown to you was edited" in output
    assert ctx.overlay.read_text("pkg/mod.py") == text.replace(
        "not in data:\n        return 1", "in data:\n        return 1"
    )


def test_numbered_lines_with_their_path_are_read_like_numbered_lines() -> None:
    from lsp_agent.agent.repair.listing_edits import listing_edit

    reply = 'pkg/mod.py:3:     if n % 100 in (11, 12):\npkg/mod.py:4:         return "th"'
    call = listing_edit(reply, {"pkg/mod.py": ORDINAL}.get, [])
    assert call.arguments["new_text"] == "    if n % 100 in (11, 12):"
