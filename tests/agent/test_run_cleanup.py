"""A run releases what its tools hold (the exec tools' sandbox and scratch copy) as soon as it ends."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from agent_support import call, done, run_script, scripted_settings

from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.sandbox import per_run
from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.registry import Tool, ToolContext, default_registry
from lsp_agent.workspace.overlay import Overlay

PRINT_CWD = "import os\nprint('cwd=' + os.getcwd())\nopen('made.txt', 'w').write('x\\n')\n"


async def _grant(tool: str, arguments: dict, reason: str) -> str:
    return "session"


@pytest.fixture
def scratch_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private temp dir, so the test sees exactly the scratch copies this run makes."""
    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    return parent


def _scratch_dirs(parent: Path) -> list[Path]:
    return sorted(parent.glob("lsp-agent-sandbox-*"))


async def test_the_sandbox_scratch_copy_is_gone_when_the_run_ends(workspace, scratch_parent):
    script = [{"content": "", "tool_calls": [call("run_python", code=PRINT_CWD)]}, done("ran")]
    registry = register_exec_tools(default_registry())
    o = await run_script(workspace, script, registry=registry, permission=_grant)
    output = o.of("tool_result")[0]["output"]
    assert o.result.success and "cwd=" in output, output
    assert o.result.proposal is not None and o.result.proposal.paths() == ["made.txt"]
    assert _scratch_dirs(scratch_parent) == []  # the scratch copy was removed with the run, not at exit
    assert "sandbox" not in o.run.ctx.extras and o.run.overlay not in per_run._SANDBOXES
    assert not (workspace / "made.txt").exists()


async def test_the_sandbox_is_released_when_the_run_is_cancelled(workspace, scratch_parent):
    registry = register_exec_tools(default_registry())
    started = asyncio.Event()

    async def wait_forever(ctx) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    registry.register(Tool("wait", "Waits.", {"type": "object", "properties": {}}, wait_forever))
    script = [
        {"content": "", "tool_calls": [call("run_python", code=PRINT_CWD)]},
        {"content": "", "tool_calls": [call("wait")]},
    ]
    with ScriptedModelServer(script) as server:
        settings = scripted_settings(server)
        run = AgentRun(
            "t", settings, workspace, registry=registry, permission=_grant, model_client=ModelClient(settings)
        )
        task = asyncio.create_task(run.run())
        await asyncio.wait_for(started.wait(), 30)
        assert len(_scratch_dirs(scratch_parent)) == 1  # the copy lives while the run does
        run.cancel()
        result = await asyncio.wait_for(task, 10)
    assert result.stop_reason == "cancelled"
    assert _scratch_dirs(scratch_parent) == []


def test_context_cleanups_run_once_newest_first_and_survive_failures(tmp_path):
    ctx = ToolContext(root=tmp_path, overlay=Overlay(tmp_path))
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("boom")

    ctx.on_close(lambda: calls.append("first"))
    ctx.on_close(broken)
    ctx.on_close(lambda: calls.append("last"))
    ctx.close()
    ctx.close()
    assert calls == ["last", "broken", "first"]
