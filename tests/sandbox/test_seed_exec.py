"""Seed 001's and 003's `execute_code` runs run_python through the exec permission, and the sandbox's description
(about 1,000 characters) comes with the run's first exec result only (scripted model through litellm)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted

from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.registry import default_registry

pytestmark = pytest.mark.usefixtures("litellm_imported", "no_pytest_plugins")


def tool(name: str, **arguments: object) -> dict:
    """A script step with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_execute_code_is_run_python_and_the_sandbox_is_described_once(project: Path) -> None:
    asked: list[tuple[str, dict]] = []
    script = [
        tool("execute_code", code="print(6 * 7)"),
        tool("run_python", code="print('again')"),
        tool("run_command", argv=["python", "-c", "print('third')"]),
        tool("task_complete", summary="ran"),
    ]
    out = await run_scripted(
        project,
        script,
        "run some code",
        registry=register_exec_tools(default_registry()),
        permission=asker("allow_once", asked),
    )
    assert [a[0] for a in asked] == [
        "run_python",
        "run_python",
        "run_command",
    ]  # the alias asks as run_python
    first, second, third = (r["output"] for r in out.of("tool_result")[:3])
    assert first.startswith("[Note: `execute_code` is called `run_python` here. Call run_python with its own")
    assert "exit status: 0" in first and "42" in first
    assert "--- sandbox ---" in first and "network: " in first
    assert "again" in second and "third" in third
    assert "--- sandbox ---" not in second and "--- sandbox ---" not in third
    assert len(second) < 400 and out.result.success
