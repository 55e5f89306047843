"""The run assembly: index configuration and opening, the registry, and one run built and run through it."""

from __future__ import annotations

import logging
from pathlib import Path

from lsp_agent.agent.events import AgentEvent
from lsp_agent.assembly import build_registry, build_run, index_config, open_index
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.tools.registry import Tool, ToolRegistry


def test_index_config_excludes_configured_secret_files_and_carries_the_embedding_endpoint():
    settings = Settings(
        index_exclude=["build/"],
        secret_files=["private/*"],
        api_base="http://127.0.0.1:9/v1",
        embeddings="openai/e",
    )
    config = index_config(settings, extra_exclude=["*.log"])
    assert config.exclude == [
        "build/",
        "private/*",
        "*.log",
    ]  # the user's secret patterns never reach the index
    assert (config.api_base, config.embeddings) == ("http://127.0.0.1:9/v1", "openai/e")


def test_open_index_refreshes_and_has_the_repo_map_ready(tmp_path: Path):
    (tmp_path / "shop.py").write_text(
        "def checkout(cart):\n    return total(cart)\n\n\ndef total(c):\n    return 1\n"
    )
    (tmp_path / ".env").write_text("API_KEY=hunter2\n")
    index = open_index(tmp_path, Settings())
    try:
        assert index.stats().files == 1  # .env left out
        cached = index._repo_map_cache
        assert cached is not None and "shop.py" in cached[2]  # the run's prompt reads it without waiting
    finally:
        index.close()


async def test_registry_tools_and_a_failing_provider(caplog):
    def stamp(registry: ToolRegistry, settings: Settings) -> None:
        schema = {"type": "object", "properties": {}}
        registry.register(Tool("stamp", "Stamp.", schema, lambda ctx: "stamped", "exec"))

    def broken(registry: ToolRegistry, settings: Settings) -> None:
        raise RuntimeError("provider exploded")

    settings = Settings(permissions={"stamp": "allow"})
    with caplog.at_level(logging.ERROR, logger="lsp_agent.assembly"):
        registry, run_settings, errors = await build_registry(settings, tools=[broken, stamp])
    assert errors == [] and "provider exploded" in caplog.text
    assert {"stamp", "read_file", "run_python"} <= set(registry.names())
    assert run_settings.permissions == {"stamp": "allow"}
    without_exec, _, _ = await build_registry(settings, exec_tools=False)
    assert "run_python" not in without_exec.names() and "read_file" in without_exec.names()


async def test_build_run_runs_a_task_with_a_front_ends_tool(tmp_path: Path):
    def stamp(registry: ToolRegistry, settings: Settings) -> None:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        registry.register(Tool("stamp", "Stamp a text.", schema, lambda ctx, text: f"stamped {text}"))

    script = [
        {"content": "", "tool_calls": [{"name": "stamp", "arguments": {"text": "hi"}}]},
        {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "done"}}]},
    ]
    events: list[AgentEvent] = []
    with ScriptedModelServer(script) as model:
        settings = Settings(model="openai/scripted", api_base=model.base_url, api_key="test")
        run = await build_run(
            "stamp hi", settings, tmp_path, sink=events.append, asker=None, tools=[stamp], run_id="r1"
        )
        result = await run.run()
    assert result.success and run.run_id == "r1"
    outputs = [e.data.get("output") for e in events if e.kind == "tool_result"]
    assert any("stamped hi" in str(o) for o in outputs), outputs
