"""SEARCH/REPLACE edit blocks as small models write them, replies cut after their first action, loose matching."""

from __future__ import annotations

import pytest

from lsp_agent.agent.edit_blocks import close_cut_block, parse_edit_block
from lsp_agent.agent.parsing import first_action_only
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
