"""The lenient prompt-mode parser: every accepted form, and clear errors for broken ones."""

from __future__ import annotations

import pytest

from lsp_agent.agent.model.parsing import load_json_object, looks_like_tool_attempt, parse_reply


def _one(text: str):
    parsed = parse_reply(text)
    assert parsed.error is None, parsed.error
    assert len(parsed.calls) == 1, parsed
    return parsed, parsed.calls[0]


def test_tool_call_tags():
    parsed, call = _one(
        'Let me look.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>'
    )
    assert (call.name, call.arguments) == ("read_file", {"path": "a.py"})
    assert parsed.thought == "Let me look."


def test_unclosed_tool_call_tag_at_end_of_reply():
    _, call = _one('<tool_call>{"name": "list_files", "arguments": {}}')
    assert call.name == "list_files" and call.arguments == {}


def test_fenced_tool_call_block_with_trailing_text():
    text = 'I will search.\n```tool_call\n{"name": "search_text", "arguments": {"pattern": "def add"}}\n```\nThen read.'
    _, call = _one(text)
    assert call.arguments == {"pattern": "def add"}


def test_thought_action_with_json():
    parsed, call = _one(
        '<THOUGHT>Read the file first.</THOUGHT>\n<ACTION>{"name": "read_file", "arguments": {"path": "x.py"}}</ACTION>'
    )
    assert parsed.thought == "Read the file first."
    assert call.arguments == {"path": "x.py"}


def test_thought_action_with_tool_name_and_parameters_elements():
    parsed, call = _one(
        "<THOUGHT>t</THOUGHT><ACTION><tool_name>read_file</tool_name>"
        '<parameters>{"path": "x.py", "start_line": 2}</parameters></ACTION>'
    )
    assert (call.name, call.arguments) == ("read_file", {"path": "x.py", "start_line": 2})


def test_thought_action_with_parameter_child_elements():
    _, call = _one(
        "<THOUGHT>t</THOUGHT><ACTION><tool_name>get_file_info</tool_name><path>a.py</path></ACTION>"
    )
    assert (call.name, call.arguments) == ("get_file_info", {"path": "a.py"})


def test_malformed_xml_with_code_still_parses():
    # `<` and `&` in the code make the XML invalid; the regex fallback still finds the action.
    text = (
        '<THOUGHT>Fix the comparison & return</THOUGHT>\n<ACTION>{"name": "edit_file", "arguments": '
        '{"path": "a.py", "old_text": "if a < b && c:", "new_text": "if a <= b and c:"}}</ACTION>'
    )
    _, call = _one(text)
    assert call.arguments["old_text"] == "if a < b && c:"


def test_unclosed_action_and_missing_thought_close():
    _, call = _one('<THOUGHT>partial <ACTION>{"name": "list_files", "arguments": {"path": "src"}}')
    assert call.arguments == {"path": "src"}


def test_json_thought_action_seed_style():
    parsed, call = _one('{"thought": "search it", "action": "search_text", "action_input": {"pattern": "x"}}')
    assert parsed.thought == "search it"
    assert (call.name, call.arguments) == ("search_text", {"pattern": "x"})


def test_json_action_object():
    _, call = _one('{"thought": "t", "action": {"name": "read_file", "arguments": {"path": "b.py"}}}')
    assert call.arguments == {"path": "b.py"}


def test_json_codeact_style_fields_become_arguments():
    _, call = _one('{"thought": "run it", "action": "execute_code", "code": "print(1)"}')
    assert (call.name, call.arguments) == ("execute_code", {"code": "print(1)"})


def test_json_provide_answer_is_a_final_answer():
    parsed = parse_reply('{"thought": "done", "action": "provide_answer", "final_answer": "42"}')
    assert parsed.calls == [] and parsed.final == "42" and parsed.error is None


def test_bare_name_arguments_object_in_json_fence_with_trailing_text():
    _, call = _one('```json\n{"name": "find_symbol", "arguments": {"name": "Parser"}}\n```\nI will wait.')
    assert call.arguments == {"name": "Parser"}


def test_single_quotes_and_trailing_commas():
    _, call = _one(
        "<tool_call>{'name': 'read_file', 'arguments': {'path': 'a.py', 'end_line': 3,},}</tool_call>"
    )
    assert call.arguments == {"path": "a.py", "end_line": 3}


def test_json_literals_in_single_quoted_object():
    _, call = _one(
        "<tool_call>{'name': 'search_text', 'arguments': {'pattern': 'x', 'regex': true}}</tool_call>"
    )
    assert call.arguments == {"pattern": "x", "regex": True}


def test_arguments_given_as_a_json_string():
    _, call = _one('<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}</tool_call>')
    assert call.arguments == {"path": "a.py"}


def test_literal_newlines_inside_strings():
    _, call = _one(
        '<tool_call>{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 1\ny = 2\n"}}</tool_call>'
    )
    assert call.arguments["content"] == "x = 1\ny = 2\n"


def test_plain_text_is_a_final_answer():
    parsed = parse_reply("The add function subtracts; it should add.")
    assert parsed.calls == [] and parsed.error is None
    assert parsed.final == "The add function subtracts; it should add."


def test_text_with_unrelated_json_is_a_final_answer():
    parsed = parse_reply('The config looks like {"debug": true}.')
    assert parsed.calls == [] and parsed.error is None and parsed.final


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{name: read_file}</tool_call>",
        "<tool_call>not json at all</tool_call>",
        '<THOUGHT>x</THOUGHT><ACTION>{"arguments": {"path": "a"}}</ACTION>',
        "<THOUGHT>x</THOUGHT><ACTION></ACTION>",
        '{"name": "read_file", "arguments": {"path": "a.py"',
    ],
)
def test_broken_calls_are_errors(text):
    parsed = parse_reply(text)
    assert parsed.calls == []
    assert parsed.error, parsed


def test_tags_only_ignores_plain_json():
    parsed = parse_reply('{"name": "read_file", "arguments": {}}', tags_only=True)
    assert parsed.calls == [] and parsed.final


def test_looks_like_tool_attempt():
    assert looks_like_tool_attempt('{"name": "x", "arguments": {}}')
    assert looks_like_tool_attempt("<ACTION>")
    assert not looks_like_tool_attempt("just words")


def test_load_json_object_takes_first_balanced_object():
    assert load_json_object('noise {"a": {"b": "}"}} trailing {"c": 1}') == {"a": {"b": "}"}}


def test_function_tag_form():
    parsed, call = _one('Reading.\n<function=read_file>{"path": "a.py"}</function>')
    assert (call.name, call.arguments, parsed.thought) == ("read_file", {"path": "a.py"}, "Reading.")
    assert (
        parse_reply('<function=list_files>{"path": "src"}</function>', tags_only=True).calls[0].name
        == "list_files"
    )


def test_classic_react_text_form():
    parsed, call = _one(
        'Thought: I should search.\nAction: search_text\nAction Input: {"pattern": "def add"}'
    )
    assert (call.name, call.arguments, parsed.thought) == (
        "search_text",
        {"pattern": "def add"},
        "I should search.",
    )
    parsed = parse_reply('Thought: done\nAction: final_answer\nAction Input: {"answer": "42"}')
    assert parsed.final == "42" and parsed.calls == []


@pytest.mark.parametrize(
    "text",
    [
        "{" * 50000,
        "<ACTION>" + '{"a":' * 20000,
        "<tool_call>" + "[" * 100000 + "</tool_call>",
        "<tool_call>" + '"' * 1000,
    ],
)
def test_pathological_replies_never_raise(text):
    parsed = parse_reply(text)
    assert parsed.calls == [] and (parsed.error or parsed.final is not None)


def test_a_final_answer_written_as_a_tagged_tool_call_is_an_answer():
    text = '<tool_call>{"name": "final_answer", "arguments": {"answer": "42"}}</tool_call>'
    for tags_only in (False, True):
        parsed = parse_reply(text, tags_only=tags_only)
        assert parsed.final == "42" and not parsed.calls and parsed.error is None


def test_escaped_surrogates_and_deep_arguments_in_a_text_tool_call():
    parsed = parse_reply('<tool_call>{"name": "read_file", "arguments": {"path": "a\\ud800.py"}}</tool_call>')
    assert parsed.calls[0].arguments == {"path": "a\ufffd.py"}
    deep = '{"a": ' * 40 + "1" + "}" * 40
    parsed = parse_reply(f'<tool_call>{{"name": "read_file", "arguments": {deep}}}</tool_call>')
    assert not parsed.calls and "levels deep" in parsed.error


def test_cleaning_keeps_the_order_of_arguments():
    from lsp_agent.agent.model.sanitize import clean_value

    value = {"path": "a", "old_text": ["x", {"z": 1, "b": "\ud800"}], "new_text": "c"}
    cleaned = clean_value(value)
    assert cleaned == {"path": "a", "old_text": ["x", {"z": 1, "b": "\ufffd"}], "new_text": "c"}
    assert list(cleaned) == ["path", "old_text", "new_text"] and list(cleaned["old_text"][1]) == ["z", "b"]
