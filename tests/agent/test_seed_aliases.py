"""Other agents' tool and parameter names (the seeds', and those models are trained on) run our tools, and the
observation names ours: through the scripted server and litellm's real path, native and prompt tool calling."""

from __future__ import annotations

import json

from agent_support import call, done, run_script

from lsp_agent.tools.aliases import alias_note, canonical_arguments, canonical_tool
from lsp_agent.tools.builtin import builtin_tools

ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
EDIT_NOTE = (
    "[Note: `replace` is called `edit_file` here; `filePath` is `path`, `oldString` is `old_text`, `newString` is "
    "`new_text`. Call edit_file with its own parameters (path, old_text, new_text) from now on.]\n"
)


async def test_native_replace_with_other_agents_parameters_edits_and_names_ours(workspace):
    edit = call("replace", filePath="pkg/calc.py", oldString="a - b", newString="a + b")
    o = await run_script(workspace, [{"content": "", "tool_calls": [edit]}, done("fixed")])
    assert o.result.success and o.result.proposal is not None
    assert "+    return a + b" in o.result.proposal.unified_diff()
    observation = o.requests[1]["messages"][-1]
    assert observation["role"] == "tool"
    assert observation["content"].startswith("Observation from replace:\n" + EDIT_NOTE)
    assert "Edited pkg/calc.py: replaced 1 line" in observation["content"]
    (result,) = [r for r in o.of("tool_result") if r["name"] == "replace"]
    assert result["ok"]


async def test_native_parameter_aliases_of_our_own_tools(workspace):
    script = [
        {"content": "", "tool_calls": [call("read_file", file_path="pkg/calc.py", startLine=2, endLine=2)]},
        {"content": "", "tool_calls": [call("list_dir", path="pkg")]},
        {
            "content": "",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_string="a - b", new_str="a + b")],
        },
        done("fixed"),
    ]
    o = await run_script(workspace, script)
    read, listing, edit = (o.requests[i]["messages"][-1]["content"] for i in (1, 2, 3))
    assert read.startswith(
        "Observation from read_file:\n[Note: its parameters `file_path` is `path`, `startLine` is `start_line`"
    )
    assert "2:     return a - b" in read and "def mul" not in read
    assert (
        "[Note: `list_dir` is called `list_files` here. Call list_files" in listing and "calc.py" in listing
    )
    assert (
        "\n[Note: its parameters `old_string` is `old_text`, `new_str` is `new_text`. Call edit_file" in edit
    )
    assert o.result.success and "+    return a + b" in o.result.proposal.unified_diff()
    assert (workspace / "pkg" / "calc.py").read_text() == ORIGINAL  # the proposal waits for the user


async def test_prompt_mode_seed_names_run_our_tools(workspace):
    def action(name: str, **arguments: object) -> dict:
        return {"content": f"<ACTION>{json.dumps({'name': name, 'arguments': arguments})}</ACTION>"}

    script = [
        action("readFile", filePath="pkg/calc.py"),
        action("replace", file_path="pkg/calc.py", old_string="a - b", new_string="a + b"),
        action("task_complete", summary="fixed"),
    ]
    o = await run_script(workspace, script, tool_calling="prompt")
    read, edit = o.requests[1]["messages"][-1]["content"], o.requests[2]["messages"][-1]["content"]
    assert "[Note: `readFile` is called `read_file` here; `filePath` is `path`." in read
    assert "1: def add(a, b):" in read
    assert (
        "[Note: `replace` is called `edit_file` here; `file_path` is `path`, `old_string` is `old_text`"
        in edit
    )
    assert o.result.success and "+    return a + b" in o.result.proposal.unified_diff()


async def test_our_own_names_get_no_note(workspace):
    o = await run_script(
        workspace, [{"content": "", "tool_calls": [call("read_file", path="pkg/calc.py")]}, done()]
    )
    assert "[Note:" not in o.requests[1]["messages"][-1]["content"]


def test_aliases_never_shadow_a_parameter_or_a_canonical_value():
    edit = next(t for t in builtin_tools() if t.name == "edit_file").parameters
    args, renamed = canonical_arguments(
        edit, {"path": "a.py", "file_path": "b.py", "old_text": "x", "new_text": "y"}
    )
    assert (
        renamed == {} and args["path"] == "a.py"
    )  # the canonical value wins; the alias stays and is refused
    mcp_schema = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "path": {"type": "string"}},
    }
    assert canonical_arguments(mcp_schema, {"file_path": "x"}) == (
        {"file_path": "x"},
        {},
    )  # its own parameter
    args, renamed = canonical_arguments(edit, '{"filePath": "a.py", "oldString": "x", "newString": "y"}')
    assert args == {"path": "a.py", "old_text": "x", "new_text": "y"} and len(renamed) == 3
    assert canonical_tool("functions.execute_code") == "run_python" and canonical_tool("edit_file") is None
    assert alias_note("edit_file", "edit_file", {}, edit) == ""


def test_seed_read_window_offset_and_limit_become_lines():
    read = next(t for t in builtin_tools() if t.name == "read_file").parameters
    args, renamed = canonical_arguments(read, {"file_path": "a.py", "offset": 10, "limit": 5})
    assert args == {"path": "a.py", "start_line": 10, "end_line": 14}
    assert renamed == {
        "file_path": "path",
        "offset": "start_line",
        "limit": "end_line (start_line + limit - 1)",
    }
    assert canonical_arguments(read, {"path": "a.py", "offset": True}) == (
        {"path": "a.py", "offset": True},
        {},
    )
    assert canonical_arguments(read, {"path": "a.py", "start_line": 2, "offset": 3})[1] == {}  # ours wins
