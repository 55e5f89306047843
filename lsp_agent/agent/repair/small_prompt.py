"""The system prompt of the small-model profile: few tools in one line each, one format, a real-path example.

A small model copies what it sees: the examples use a file that exists in this workspace, and the prompt stays
short (~500 tokens) because a local model reads it at a few dozen tokens a second. In prompt mode code changes are
SEARCH/REPLACE blocks (agent/model/edit_blocks.py), which a small model writes far more reliably than JSON strings.
"""

from __future__ import annotations

from typing import Any

from lsp_agent.tools.fault_lines import HEADER as FAULT_HEADER

INTRO = """You are a coding agent working in the workspace `{root}`. You fix the task by calling tools, one per
reply. After each call you get its result in the next message; never write a result yourself.
Paths are relative to the workspace root and must be exactly as shown, e.g. `{path}`."""

SHORT_DESCRIPTIONS = {
    "read_file": "read_file(path, start_line, end_line): the file's numbered lines.",
    "search_text": "search_text(pattern, path): lines containing the text, as path:line:text.",
    "edit_file": (
        "edit_file(path, old_text, new_text): replace old_text with new_text. old_text is copied exactly from "
        "the file (same indentation, no line numbers) and occurs once."
    ),
    "write_file": "write_file(path, content): create a file or replace its whole content.",
    "run_tests": 'run_tests(args): run pytest on the code with your edits, e.g. args ["tests/test_x.py"].',
    "task_complete": "task_complete(summary): finish when the fix is done; the tests run first.",
}

FORMAT = """Reply with exactly one THOUGHT and one ACTION, nothing after the ACTION:
<THOUGHT>one or two short sentences</THOUGHT>
<ACTION>{{"name": "read_file", "arguments": {{"path": "{path}", "start_line": 1, "end_line": 40}}}}</ACTION>

An edit looks like this (the texts are only an example):
<ACTION>{{"name": "edit_file", "arguments": {{"path": "{path}", "old_text": "    if count > limit:", "new_text": "    if count >= limit:"}}}}</ACTION>

When the fix is done:
<ACTION>{{"name": "task_complete", "arguments": {{"summary": "what you changed and why"}}}}</ACTION>"""

# Prompt mode: code changes as plain-text blocks (no JSON escaping), other tools as one ACTION.
BLOCK_FORMAT = """To change code, reply with a THOUGHT and one SEARCH/REPLACE edit: the file's path, then SEARCH with
lines copied exactly from the file (without the line numbers), then REPLACE with the new lines:
<THOUGHT>one or two short sentences</THOUGHT>
{path}
<<<<<<< SEARCH
    if count > limit:
=======
    if count >= limit:
>>>>>>> REPLACE
{after}
To use a tool instead, reply with a THOUGHT and one ACTION:
<THOUGHT>one or two short sentences</THOUGHT>
<ACTION>{{"name": "read_file", "arguments": {{"path": "{path}", "start_line": 1, "end_line": 40}}}}</ACTION>

When the fix is done:
<ACTION>{{"name": "task_complete", "arguments": {{"summary": "what you changed and why"}}}}</ACTION>"""
AFTER_TESTED = (
    "After each edit the tests the task names run: if they still fail, you get the failure and try again.\n"
)
ASK_FOR_EDIT = "Fix it with one SEARCH/REPLACE edit."

# One worked exchange before the task (a made-up project, shown as such): a small model follows a format it has
# seen answered far more reliably than one it has only read about.
EXAMPLE_TASK = f"""(An example from another project, to show the reply format.)
Task: The tests in tests/test_names.py fail since the last change to names/slug.py; fix it.

I ran the tests the task names; they fail now:
`python -m pytest tests/test_names.py`: 1 failed, 6 passed
Failing: tests/test_names.py::test_slug
First failure:
tests/test_names.py:8: in test_slug
    assert slug("Hello World") == "hello-world"
E   AssertionError: assert 'hello_world' == 'hello-world'

{FAULT_HEADER}
names/slug.py:6: return "_".join(words)
names/slug.py:5: words = title.lower().split()

Code that looks relevant (current content, numbered lines):
names/slug.py lines 4-6 (slug):
4: def slug(title):
5:     words = title.lower().split()
6:     return "_".join(words)

The most suspicious line is names/slug.py line 6: the bug is likely on or near it. {ASK_FOR_EDIT}"""
EXAMPLE_REPLY = """<THOUGHT>slug("Hello World") returns 'hello_world' but the test expects 'hello-world': line 6 joins the \
words with "_" instead of "-".</THOUGHT>
names/slug.py
<<<<<<< SEARCH
    return "_".join(words)
=======
    return "-".join(words)
>>>>>>> REPLACE"""

RULES = """Rules: the code shown to you is current. Change the code, not the tests. Make the smallest change that
fixes the problem, then call task_complete."""
RULES_TESTED = """Rules: the code shown to you is current. Change the code, not the tests. Make the smallest change
that fixes the problem."""


def block_correction(problem: str) -> str:
    """The answer to a reply that could not be read, in prompt mode with edit blocks."""
    return (
        f"Error: your reply could not be read ({problem}). Reply with a THOUGHT, the file's path and one "
        "SEARCH/REPLACE block as in the example, or with a THOUGHT and one ACTION."
    )


def example_turns() -> list[dict[str, str]]:
    """The worked example as conversation turns (a task and its edit) for prompt mode with edit blocks."""
    return [{"role": "user", "content": EXAMPLE_TASK}, {"role": "assistant", "content": EXAMPLE_REPLY}]


def tool_lines(schemas: list[dict[str, Any]], skip: tuple[str, ...] = ()) -> str:
    """One line per tool: the short form for the known ones, name(params): first sentence for others."""
    lines = ["Tools:"]
    for schema in schemas:
        fn = schema.get("function", schema)
        name = str(fn.get("name"))
        if name in skip:
            continue
        line = SHORT_DESCRIPTIONS.get(name)
        if line is None:
            params = ", ".join((fn.get("parameters") or {}).get("properties") or {})
            first = str(fn.get("description", "")).split(". ")[0].rstrip(".")
            line = f"{name}({params}): {first}."
        lines.append("- " + line)
    return "\n".join(lines)


def small_system_prompt(
    *,
    mode: str,
    schemas: list[dict[str, Any]],
    root_name: str,
    example_path: str,
    blocks: bool = False,
    tested: bool = False,
) -> str:
    """The small profile's system prompt for prompt-injected (tools listed) or native tool calling; with `blocks`
    (prompt mode) edits are SEARCH/REPLACE blocks, with `tested` the prompt says each edit is tested."""
    parts = [INTRO.format(root=root_name, path=example_path)]
    if mode == "prompt" and blocks:
        parts.append(tool_lines(schemas, skip=("edit_file",)))
        parts.append(BLOCK_FORMAT.format(path=example_path, after=AFTER_TESTED if tested else ""))
    elif mode == "prompt":
        parts.append(tool_lines(schemas))
        parts.append(FORMAT.format(path=example_path))
    else:
        parts.append("Call one tool per reply; say in one short sentence why before each call.")
    parts.append(RULES_TESTED if tested else RULES)
    return "\n\n".join(parts)
