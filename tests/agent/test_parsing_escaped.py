"""Replies whose tags and quotes came HTML-escaped, and replies a stop sequence cut before the closing tag."""

from __future__ import annotations

import pytest

from lsp_agent.agent.model.parsing import (
    close_cut_action,
    looks_like_tool_attempt,
    parse_reply,
    unescape_markup,
)

# The forms the 1.5B model wrote in prompt mode (issue 16), with what it went on to invent after its action.
ESCAPED_TAGS_AND_QUOTES = (
    "&lt;THOUGHT&gt;I should look at the function first.&lt;/THOUGHT&gt;\n"
    "&lt;ACTION&gt;{&#34;name&#34;: &#34;read_file&#34;, &#34;arguments&#34;: {&#34;path&#34;: "
    "&#34;src/mathutil/core.py&#34;}}&lt;/ACTION&gt;\n"
    "The output is: def clamp(x, lo, hi): ...\nSo the fix is to swap the comparison."
)


def _call(text: str) -> tuple[str, str, object]:
    parsed = parse_reply(text)
    assert parsed.error is None and len(parsed.calls) == 1, parsed
    return parsed.thought, parsed.calls[0].name, parsed.calls[0].arguments


def test_escaped_tags_and_numeric_quote_entities() -> None:
    thought, name, args = _call(ESCAPED_TAGS_AND_QUOTES)
    assert thought == "I should look at the function first."
    assert (name, args) == ("read_file", {"path": "src/mathutil/core.py"})


@pytest.mark.parametrize("quote", ["&quot;", "&#34;", "&#x22;"])
def test_literal_tags_with_escaped_quotes(quote: str) -> None:
    body = '{"name": "edit_file", "arguments": {"path": "a.py", "old_text": "a < b", "new_text": "a <= b"}}'
    text = f"<THOUGHT>Fix it.</THOUGHT>\n<ACTION>{body.replace(chr(34), quote)}</ACTION>"
    assert _call(text) == (
        "Fix it.",
        "edit_file",
        {"path": "a.py", "old_text": "a < b", "new_text": "a <= b"},
    )


def test_escaped_tags_around_plain_json_decode_entities_in_the_arguments() -> None:
    text = (
        "&lt;ACTION&gt;"
        '{"name": "edit_file", "arguments": {"path": "a.py", "old_text": "x &lt; 0", "new_text": "x &lt;= 0"}}'
        "&lt;/ACTION&gt;"
    )
    assert _call(text)[2] == {"path": "a.py", "old_text": "x < 0", "new_text": "x <= 0"}


def test_entities_in_a_reply_with_literal_tags_are_left_alone() -> None:
    text = '<ACTION>{"name": "write_file", "arguments": {"path": "a.html", "content": "&lt;p&gt;"}}</ACTION>'
    assert _call(text)[2] == {"path": "a.html", "content": "&lt;p&gt;"}
    assert unescape_markup(text) == text


@pytest.mark.parametrize(
    "text",
    [
        '<THOUGHT>Look.</THOUGHT>\n<ACTION>{"name": "read_file", "arguments": {"path": "a.py"}}',
        "&lt;THOUGHT&gt;Look.&lt;/THOUGHT&gt;\n&lt;ACTION&gt;{&#34;name&#34;: &#34;read_file&#34;, "
        "&#34;arguments&#34;: {&#34;path&#34;: &#34;a.py&#34;}}",
    ],
)
def test_a_reply_cut_at_the_stop_sequence_parses_and_gets_its_closing_tag_back(text: str) -> None:
    assert _call(text) == ("Look.", "read_file", {"path": "a.py"})
    closed = close_cut_action(text)
    assert closed.endswith("</ACTION>" if text.startswith("<") else "&lt;/ACTION&gt;")
    assert _call(closed) == ("Look.", "read_file", {"path": "a.py"})
    assert close_cut_action(closed) == closed


def test_close_cut_action_leaves_replies_without_an_open_action_alone() -> None:
    for text in ("All done.", '<tool_call>{"name": "x"}', "<ACTION>{}</ACTION> then text"):
        assert close_cut_action(text) == text


def test_an_escaped_but_broken_action_is_a_tool_attempt_with_a_clear_error() -> None:
    text = "&lt;ACTION&gt;{&#34;name&#34;: &#34;read_file&#34;, &#34;arguments&#34;: {&#34;path&#34;"
    assert looks_like_tool_attempt(text)
    parsed = parse_reply(text)
    assert parsed.calls == [] and parsed.error and "not valid JSON" in parsed.error
