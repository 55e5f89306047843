"""The system prompt of the small-model profile: few tools in one line each, one format, a real-path example.

A small model copies what it sees: the examples use a file that exists in this workspace, and the prompt stays
short (~500 tokens) because a local model reads it at a few dozen tokens a second.
"""

from __future__ import annotations

from typing import Any

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

RULES = """Rules: the code shown to you is current. Change the code, not the tests. Make the smallest change that
fixes the problem, then call task_complete."""


def tool_lines(schemas: list[dict[str, Any]]) -> str:
    """One line per tool: the short form for the known ones, name(params): first sentence for others."""
    lines = ["Tools:"]
    for schema in schemas:
        fn = schema.get("function", schema)
        name = str(fn.get("name"))
        line = SHORT_DESCRIPTIONS.get(name)
        if line is None:
            params = ", ".join((fn.get("parameters") or {}).get("properties") or {})
            first = str(fn.get("description", "")).split(". ")[0].rstrip(".")
            line = f"{name}({params}): {first}."
        lines.append("- " + line)
    return "\n".join(lines)


def small_system_prompt(
    *, mode: str, schemas: list[dict[str, Any]], root_name: str, example_path: str
) -> str:
    """The small profile's system prompt for prompt-injected (tools listed) or native tool calling."""
    parts = [INTRO.format(root=root_name, path=example_path)]
    if mode == "prompt":
        parts.append(tool_lines(schemas))
        parts.append(FORMAT.format(path=example_path))
    else:
        parts.append("Call one tool per reply; say in one short sentence why before each call.")
    parts.append(RULES)
    return "\n\n".join(parts)
