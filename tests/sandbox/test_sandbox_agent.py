"""The exec tools inside a real ReAct run (scripted model through litellm): a test-driven fix, permission denied."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import CALC, asker, run_scripted, snapshot

from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.registry import default_registry


@pytest.fixture(scope="module", autouse=True)
def _litellm_once() -> None:
    """Import litellm once for this module."""
    from lsp_agent.agent.model.client import get_litellm

    get_litellm()


def tool(name: str, **arguments: object) -> dict:
    """A script step with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_test_driven_fix_runs_tests_in_the_sandbox(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the tiny project needs no plugins: faster
    before = snapshot(project)
    asked: list[tuple[str, dict]] = []
    script = [
        tool("run_tests", args=["-x"]),
        tool("edit_file", path="pkg/calc.py", old_text="return a - b", new_text="return a + b"),
        tool("run_tests", args=["-x"]),
        tool("task_complete", summary="add() fixed; the tests pass"),
    ]
    out = await run_scripted(
        project,
        script,
        "make the tests pass",
        registry=register_exec_tools(default_registry()),
        permission=asker("session", asked),
    )
    assert out.result.success and out.result.stop_reason == "complete"
    results = [r for r in out.of("tool_result") if r["name"] == "run_tests"]
    assert "1 failed" in results[0]["output"] and "exit status: 1" in results[0]["output"]
    assert "1 passed" in results[1]["output"] and "exit status: 0" in results[1]["output"]
    assert "network: " in results[0]["output"]  # the sandbox is described in the run's first exec result only
    assert "--- sandbox ---" not in results[1]["output"]
    assert [a[0] for a in asked] == ["run_tests"]  # "session" covered the second call
    assert [p["decision"] for p in out.of("permission")] == ["allowed", "allowed"]
    # The model read the failing test output before fixing.
    assert "assert -1 == 5" in str(out.requests[1]["messages"])
    # Nothing touched the workspace until the proposal is applied.
    assert snapshot(project) == before
    proposal = out.result.proposal
    assert proposal is not None and proposal.paths() == ["pkg/calc.py"]
    assert not proposal.apply_to_disk(project)
    assert (project / "pkg" / "calc.py").read_text() == CALC.replace("a - b", "a + b")


async def test_permission_denied_is_an_observation_and_the_run_goes_on(project: Path) -> None:
    script = [
        tool("run_python", code="print('should not run')"),
        tool("task_complete", summary="could not run code"),
    ]
    out = await run_scripted(
        project,
        script,
        "run something",
        registry=register_exec_tools(default_registry()),
        permission=asker("deny"),
    )
    assert out.result.success
    denied = out.of("tool_result")[0]
    assert denied["name"] == "run_python" and not denied["ok"]
    assert "Permission denied" in denied["output"] and "should not run" not in denied["output"]
    assert out.of("permission")[0]["decision"] == "denied"
    assert "Permission denied" in str(out.requests[1]["messages"])


async def test_exec_tools_report_bad_arguments(project: Path) -> None:
    script = [
        tool("run_command", argv=[]),
        tool("task_complete", summary="done"),
    ]
    out = await run_scripted(
        project,
        script,
        "run",
        registry=register_exec_tools(default_registry()),
        permissions={"run_command": "allow"},
    )
    first = out.of("tool_result")[0]
    assert not first["ok"] and "non-empty list of strings" in first["output"]
