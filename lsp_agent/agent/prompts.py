"""The texts the agent sends: system prompts for both tool-calling modes, corrections, planning and summaries."""

from __future__ import annotations

import json
from typing import Any

INTRO = """You are lsp-agent, a coding agent working inside the user's code workspace. You solve the task with the
ReAct pattern: think about what to do next, act by calling one of the available tools, observe the result, and
repeat until the task is done.

Rules:
- Paths are relative to the workspace root; line numbers are 1-based.
- Look before you change: find the relevant code (search_code, search_text, find_symbol, list_files) and read it
  (read_file) before editing.
- Your writes (write_file, edit_file, delete_file) go into a proposal the user reviews; the disk does not change
  while you work, but your later reads and searches see your edits.
- edit_file replaces old_text, which must match the file exactly once; include enough surrounding lines.
- Keep changes minimal and in the style of the surrounding code. Make sure Python files stay valid.
- When the task is done, call task_complete with a short summary of what you found or changed. If the task is a
  question, put the answer in the summary."""

NATIVE_FORMAT = """Before each tool call, state your reasoning in one or two short sentences. You may call several
independent tools at once."""

PROMPT_FORMAT = """Response format: every reply is exactly one reasoning step and one tool call, written as

<THOUGHT>your reasoning about what to do next</THOUGHT>
<ACTION>{"name": "tool_name", "arguments": {"parameter": "value"}}</ACTION>

The ACTION holds one JSON object with the tool's "name" and its "arguments" (a JSON object; use double quotes
and escape newlines inside strings as \\n). Call exactly one tool per reply and wait for its result, which
arrives in the next message as an Observation. Example:

<THOUGHT>I need to see how the settings are loaded before changing them.</THOUGHT>
<ACTION>{"name": "read_file", "arguments": {"path": "src/config.py", "start_line": 1, "end_line": 80}}</ACTION>

When the task is done, call task_complete:
<THOUGHT>The fix is in place.</THOUGHT>
<ACTION>{"name": "task_complete", "arguments": {"summary": "Fixed the off-by-one in parse_range."}}</ACTION>"""


EMPTY_REPLY = "Your reply was empty. Continue the task by calling a tool, or call task_complete with a summary if it is done."


def tool_descriptions(schemas: list[dict[str, Any]]) -> str:
    """Tools as the seed's <tool><name/><description/><parameters/></tool> blocks under "Available Tools:"."""
    blocks = ["Available Tools:"]
    for schema in schemas:
        fn = schema.get("function", schema)
        params = json.dumps(fn.get("parameters", {}), ensure_ascii=False)
        blocks.append(
            f"<tool>\n<name>{fn.get('name')}</name>\n<description>{fn.get('description', '')}</description>\n"
            f"<parameters>{params}</parameters>\n</tool>"
        )
    return "\n".join(blocks)


def system_prompt(
    *,
    mode: str,
    schemas: list[dict[str, Any]],
    root_name: str,
    repo_map: str = "",
    extra: str = "",
) -> str:
    """The system prompt for native or prompt-injected tool calling."""
    parts = [INTRO, f"The workspace is the directory `{root_name}`."]
    if repo_map:
        parts.append("Most important files and symbols of the workspace:\n" + repo_map)
    if mode == "prompt":
        parts.append(tool_descriptions(schemas))
        parts.append(PROMPT_FORMAT)
    else:
        parts.append(NATIVE_FORMAT)
    if extra:
        parts.append(extra)
    return "\n\n".join(parts)


def task_message(task: str, *, context: str | None = None, session_text: str = "") -> str:
    """The first user message: session memory, editor context, then the task."""
    parts = []
    if session_text:
        parts.append(session_text)
    if context:
        parts.append("Context from the editor:\n" + context.strip())
    parts.append("Task: " + task.strip())
    return "\n\n".join(parts)


def observation(name: str, output: str) -> str:
    """A tool result as a user message (prompt-injected mode)."""
    return f"Observation from {name}:\n{output}"


def format_correction(problem: str, mode: str, tools: list[str]) -> str:
    """The corrective observation for a reply whose tool call could not be understood."""
    names = ", ".join(tools)
    if mode == "prompt":
        return (
            f"Error: your reply could not be parsed as a tool call ({problem}).\n"
            "Reply with exactly this format and nothing else:\n"
            "<THOUGHT>your reasoning</THOUGHT>\n"
            '<ACTION>{"name": "tool_name", "arguments": {"parameter": "value"}}</ACTION>\n'
            f"Available tools: {names}. To finish, call task_complete with a summary."
        )
    return (
        f"Error: your tool call could not be understood ({problem}). Call one of the available tools with JSON "
        f"arguments matching its parameters: {names}. To finish, call task_complete with a summary."
    )


def syntax_error_report(problems: list[str]) -> str:
    """The observation sent once when the proposal holds files its changes left unparsable."""
    listing = "\n".join(f"- {p}" for p in problems)
    return (
        "Not finished yet: your changes left syntax errors in these files:\n"
        f"{listing}\n"
        "Fix them (read the lines around each error, then edit_file), then call task_complete again. "
        "If the errors are intended, call task_complete again to finish as is."
    )


PLAN_PROMPT = """Before working on the task, break it into a short plan of subtasks (at most {max_subtasks}).
Reply with only a JSON object, no other text:

{{"subtasks": [
  {{"id": 1, "description": "what to do, concretely", "dependencies": []}},
  {{"id": 2, "description": "...", "dependencies": [1]}}
]}}

"dependencies" lists the ids of subtasks that must be finished first. A simple task is one subtask.

The tools you will have: {tools}.

Task: {task}"""


def plan_request(task: str, tools: list[str], max_subtasks: int = 8) -> str:
    """The user message asking for a JSON plan."""
    return PLAN_PROMPT.format(task=task.strip(), tools=", ".join(tools), max_subtasks=max_subtasks)


def subtask_message(task: str, index: int, total: int, description: str, done: list[tuple[str, str]]) -> str:
    """The task text of one subtask: the overall task, results of earlier subtasks, and this subtask."""
    parts = [f"Overall task: {task.strip()}"]
    if done:
        lines = "\n".join(f"- {desc}: {result}" for desc, result in done)
        parts.append("Results of the subtasks finished so far:\n" + lines)
    parts.append(
        f"Your current subtask ({index}/{total}): {description}\n"
        "Work only on this subtask and call task_complete with its result when it is done."
    )
    return "\n\n".join(parts)


def final_summary_request(task: str, results: list[tuple[str, str, str]]) -> str:
    """Ask for the final answer of a planned run from the subtask results."""
    lines = "\n".join(f"- [{status}] {desc}: {result}" for desc, status, result in results)
    return (
        f"Task: {task.strip()}\n\nThe subtasks were worked on with these results:\n{lines}\n\n"
        "Write the final answer for the user: a short summary of what was done and anything left open. "
        "Plain text, no tool calls."
    )


def compaction_summary_request(transcript: str) -> str:
    """Ask the model to summarize the middle of a long conversation."""
    return (
        "Summarize this part of a coding agent's work log so the agent can continue without it. Keep file paths, "
        "symbols, decisions, edits made and open problems; drop file contents and search listings. At most 200 "
        "words, plain text.\n\n" + transcript
    )


def conversation_summary_request(transcript: str) -> str:
    """Ask the model to summarize the oldest exchanges of an editor conversation."""
    return (
        "Summarize these earlier exchanges between a user and a coding agent in their editor so the conversation "
        "can go on without them. Keep what the user asked, what the agent found and answered, the changes it "
        "proposed, which of them the user applied or rejected and why, and open questions; keep file paths and "
        "symbols. An earlier summary, if present, must be carried into yours. At most 200 words, plain text.\n\n"
        + transcript
    )
