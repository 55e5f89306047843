"""ToolRegistry: schemas, argument validation and coercion, worker threads, error capture and timing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry, default_registry
from lsp_agent.tools.validation import validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "items": {"type": "array"},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def test_default_registry_has_exactly_the_documented_tools_and_parameters():
    registry = default_registry()
    expected = {
        "list_files": ([], ["pattern", "path"]),
        "read_file": (["path"], ["path", "start_line", "end_line"]),
        "search_text": (["pattern"], ["pattern", "path", "regex", "case_sensitive"]),
        "search_code": (["query"], ["query", "top_k"]),
        "find_symbol": (["name"], ["name"]),
        "get_file_info": (["path"], ["path"]),
        "write_file": (["path", "content"], ["path", "content"]),
        "edit_file": (["path", "old_text", "new_text"], ["path", "old_text", "new_text"]),
        "delete_file": (["path"], ["path"]),
        "task_complete": (["summary"], ["summary"]),
    }
    assert registry.names() == list(expected)
    for schema in registry.schemas():
        assert schema["type"] == "function"
        fn = schema["function"]
        required, props = expected[fn["name"]]
        assert fn["parameters"]["type"] == "object"
        assert fn["parameters"]["required"] == required
        assert list(fn["parameters"]["properties"]) == props
        assert fn["description"]
    assert all(registry.get(n).permission == "none" for n in registry.names())


def test_validation_coerces_harmless_mismatches():
    args, errors = validate_arguments(
        SCHEMA, {"path": "a", "count": "5", "ratio": "0.5", "flag": "true", "items": "[1, 2]", "mode": None}
    )
    assert errors == []
    assert args == {"path": "a", "count": 5, "ratio": 0.5, "flag": True, "items": [1, 2]}
    assert validate_arguments(SCHEMA, {"path": 7, "count": 3.0})[0] == {"path": "7", "count": 3}
    assert validate_arguments(SCHEMA, '{"path": "x"}') == ({"path": "x"}, [])
    assert validate_arguments({"type": "object", "properties": {}}, "") == ({}, [])
    # As in JSON Schema, unknown keys are kept unless additionalProperties forbids them (or has a schema)
    assert validate_arguments({"type": "object"}, {"q": 1}) == ({"q": 1}, [])
    with_props = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert validate_arguments(with_props, {"a": 1, "b": "x"}) == ({"a": 1, "b": "x"}, [])
    typed_extra = {**with_props, "additionalProperties": {"type": "integer"}}
    assert validate_arguments(typed_extra, {"b": "3"}) == ({"b": 3}, [])
    assert validate_arguments(typed_extra, {"b": "x"})[1] == ["'b' must be an integer, got string \"x\""]
    closed = {**with_props, "additionalProperties": False}
    assert validate_arguments(closed, {"b": 1})[1] == ["unknown parameter 'b' (valid parameters: a)"]
    open_schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True}
    assert validate_arguments(open_schema, {"a": "2", "b": "x"}) == ({"a": 2, "b": "x"}, [])


def test_validation_names_every_bad_missing_and_unknown_parameter():
    _, errors = validate_arguments(SCHEMA, {"count": "many", "flag": "maybe", "mode": "c", "colour": 1})
    assert "'count' must be an integer, got string \"many\"" in errors
    assert "'flag' must be true or false, got string \"maybe\"" in errors
    assert "'mode' must be one of 'a', 'b', got string \"c\"" in errors
    assert any(e.startswith("unknown parameter 'colour' (valid parameters: path, count") for e in errors)
    assert "missing required parameter 'path'" in errors
    assert validate_arguments(SCHEMA, {"path": "a", "count": 0})[1] == ["'count' must be at least 1, got 0"]
    assert validate_arguments(SCHEMA, {"path": None})[1] == ["missing required parameter 'path'"]
    assert validate_arguments(SCHEMA, {"path": "a", "count": True})[1] == [
        "'count' must be an integer, got bool true"
    ]
    assert "not valid JSON" in validate_arguments(SCHEMA, '{"path": ')[1][0]
    assert validate_arguments(SCHEMA, "[1, 2]")[1] == ["arguments must be a JSON object, got list"]


def _ctx(tmp_path) -> ToolContext:
    from lsp_agent.workspace.overlay import Overlay

    return ToolContext(root=tmp_path, overlay=Overlay(tmp_path))


def _run(registry: ToolRegistry, name: str, args, ctx: ToolContext):
    return asyncio.run(registry.execute(name, args, ctx))


def test_execute_reports_bad_arguments_with_the_parameter_list(tmp_path):
    res = _run(
        default_registry(), "read_file", {"path": "x", "start_line": "one", "colour": 1}, _ctx(tmp_path)
    )
    assert not res.ok
    assert res.output.startswith("Error: invalid arguments for read_file: ")
    assert "'start_line' must be an integer" in res.output and "unknown parameter 'colour'" in res.output
    assert (
        "Parameters of read_file: path (string, required), start_line (integer), end_line (integer)"
        in res.output
    )


def test_mcp_style_schemas_pass_extra_arguments_through(tmp_path):
    """A remote tool's schema without additionalProperties (e.g. from an MCP server) accepts more keys."""
    seen: list[dict] = []

    def remote(ctx, **arguments) -> str:
        seen.append(arguments)
        return "ok"

    registry = ToolRegistry()
    registry.register(Tool("remote", "An MCP-like tool.", {"type": "object", "properties": {}}, remote))
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    registry.register(Tool("remote_q", "Another.", schema, remote))
    assert _run(registry, "remote", {"anything": [1]}, _ctx(tmp_path)).ok
    assert _run(registry, "remote_q", {"q": "x", "limit": 3}, _ctx(tmp_path)).ok
    assert seen == [{"anything": [1]}, {"q": "x", "limit": 3}]
    assert "missing required parameter 'q'" in _run(registry, "remote_q", {}, _ctx(tmp_path)).output


def test_unknown_tool_lists_available_tools_and_decorated_names_resolve(tmp_path):
    registry = default_registry()
    res = _run(registry, "rm_rf", {}, _ctx(tmp_path))
    assert not res.ok and res.output.startswith(
        "Error: unknown tool 'rm_rf'. Available tools: list_files, read_file"
    )
    (tmp_path / "a.txt").write_text("hi\n")
    assert _run(registry, "functions.read_file", {"path": "a.txt"}, _ctx(tmp_path)).output == "1: hi"


def test_sync_tools_run_in_a_worker_thread_and_async_tools_on_the_loop(tmp_path):
    seen: dict[str, object] = {}

    def sync_tool(ctx, value: int) -> str:
        seen["sync"] = threading.get_ident()
        return f"got {value * 2}"

    async def async_tool(ctx) -> str:
        seen["async"] = threading.get_ident()
        await asyncio.sleep(0)
        return "async ok"

    registry = ToolRegistry(
        [
            Tool(
                "double",
                "Double a number.",
                {"type": "object", "properties": {"value": {"type": "integer"}}},
                sync_tool,
            ),
            Tool("aio", "Async tool.", {"type": "object", "properties": {}}, async_tool),
        ]
    )

    async def main():
        seen["loop"] = threading.get_ident()
        a = await registry.execute("double", '{"value": "21"}', _ctx(tmp_path))
        b = await registry.execute("aio", None, _ctx(tmp_path))
        return a, b

    a, b = asyncio.run(main())
    assert (a.ok, a.output, b.ok, b.output) == (True, "got 42", True, "async ok")
    assert seen["sync"] != seen["loop"] and seen["async"] == seen["loop"]


def test_a_slow_sync_tool_does_not_block_the_event_loop_and_is_timed(tmp_path):
    def slow(ctx) -> str:
        time.sleep(0.2)
        return "done"

    registry = ToolRegistry([Tool("slow", "Sleep.", {"type": "object", "properties": {}}, slow)])

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        result = await registry.execute("slow", {}, _ctx(tmp_path))
        task.cancel()
        return result, ticks

    result, ticks = asyncio.run(main())
    assert result.ok and result.output == "done"
    assert result.seconds >= 0.2
    assert ticks >= 5


def test_tool_failures_become_observations(tmp_path):
    def tool_error(ctx) -> str:
        raise ToolError("the thing is missing; create it first")

    def crash(ctx) -> str:
        raise KeyError("boom")

    def returns_dict(ctx) -> dict:
        return {"a": 1}

    empty = {"type": "object", "properties": {}}
    registry = ToolRegistry(
        [
            Tool("te", "x", empty, tool_error),
            Tool("crash", "x", empty, crash),
            Tool("d", "x", empty, returns_dict),
        ]
    )
    ctx = _ctx(tmp_path)
    te = _run(registry, "te", {}, ctx)
    assert (te.ok, te.output) == (False, "Error: the thing is missing; create it first")
    crashed = _run(registry, "crash", {}, ctx)
    assert not crashed.ok and crashed.output == "Error: crash failed: KeyError: 'boom'"
    assert _run(registry, "d", {}, ctx).output == '{"a": 1}'


def test_register_rejects_duplicates_and_bad_tools():
    registry = default_registry()
    tool = registry.get("read_file")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(tool)
    registry.register(tool, replace=True)
    with pytest.raises(ValueError, match="permission"):
        Tool("x", "x", {"type": "object"}, lambda ctx: "", permission="root")
    registry.unregister("read_file")
    assert "read_file" not in registry.names()
