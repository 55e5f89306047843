"""Registry side of MCP: tool names every provider accepts, schemas, permission patterns."""

from __future__ import annotations

import re

from lsp_agent.mcp.bridge import allow_all, expand_permission_rules, mcp_tools, register_mcp_tools, tool_name
from lsp_agent.tools.registry import Tool, ToolRegistry

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_names_are_namespaced_and_provider_safe():
    assert tool_name("files", "read") == "files__read"
    assert tool_name("my server", "get.page/v2") == "my_server__get_page_v2"
    long = tool_name(
        "a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on_and_on"
    )
    assert VALID.match(long) and long.startswith("a-very-long-server-name-for-testing__")
    other = tool_name(
        "a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on_and_off"
    )
    assert long != other


def test_permission_patterns_expand_to_tool_names():
    names = ["read_file", "files__read", "files__write", "web__fetch"]
    rules = expand_permission_rules({"files__*": "allow", "files__write": "deny", "*__fetch": "deny"}, names)
    assert rules["files__read"] == "allow"
    assert rules["files__write"] == "deny"  # the exact rule wins over the pattern
    assert rules["web__fetch"] == "deny"
    assert "read_file" not in rules
    both = expand_permission_rules({"files__*": "allow", "*__read": "deny"}, names)
    assert both["files__read"] == "deny"  # deny wins between patterns


def test_allow_all_keeps_explicit_denials():
    rules = allow_all(["a__x", "a__y"], {"a__y": "deny"})
    assert rules == {"a__x": "allow", "a__y": "deny"}


def test_tools_of_ready_servers_join_the_registry_with_their_schemas(shared_manager):
    registry = ToolRegistry([Tool("read_file", "built-in", {"type": "object"}, lambda ctx: "")])
    names = register_mcp_tools(registry, shared_manager)
    assert {"notes__lookup_note", "web__lookup_note", "notes__add", "web__chart"} <= set(names)
    assert all(VALID.match(n) for n in names)
    tool = registry.get("notes__add")
    assert tool.permission == "external"
    assert tool.parameters["required"] == ["a", "b"]
    assert tool.parameters["properties"]["a"]["type"] == "integer"
    assert "title" not in tool.parameters
    assert "Add two whole numbers." in tool.description and "'notes'" in tool.description
    schema = {s["function"]["name"]: s for s in registry.schemas()}["web__lookup_note"]
    assert schema["function"]["parameters"]["properties"]["topic"]["type"] == "string"
    # registering again refreshes without duplicates
    assert sorted(register_mcp_tools(registry, shared_manager)) == sorted(names)
    assert len([t for t in mcp_tools(shared_manager) if t.name == "notes__add"]) == 1
