"""The small-model profile in a real run (scripted model in prompt mode, real index, real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import asker

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.config import Settings
from lsp_agent.index import WorkspaceIndex
from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.registry import default_registry

TASK = "The tests in tests/test_calc.py fail since the last change to pkg/calc.py; fix it."


pytestmark = pytest.mark.usefixtures("litellm_imported", "no_pytest_plugins")


def act(name: str, **arguments: object) -> dict:
    """A prompt-mode reply calling one tool."""
    action = json.dumps({"name": name, "arguments": arguments})
    return {"content": f"<THOUGHT>next</THOUGHT>\n<ACTION>{action}</ACTION>"}


def split_at_task(messages: list[dict], task: str) -> tuple[str, list[str]]:
    """The task's message and the observations after it (the worked example turn comes before the task)."""
    users = [m["content"] for m in messages if m["role"] == "user"]
    at = next(i for i, text in enumerate(users) if text.startswith("Task: " + task))
    return users[at], users[at + 1 :]


async def run_small(root: Path, script: list[dict], task: str = TASK, **changes: object):
    """A small-profile run over `root` with its index; returns (result, requests, events, asked)."""
    events: list[AgentEvent] = []
    asked: list[tuple[str, dict]] = []
    with WorkspaceIndex(root) as index, ScriptedModelServer(script) as server:
        index.refresh()
        settings = Settings(
            model="openai/scripted",
            api_base=server.base_url,
            api_key="test",
            tool_calling="prompt",
            profile="small",
            **{"repair_lines": 0, **changes},  # the loop alone unless a test asks for line repairs
        )
        client = ModelClient(settings, retry_base=0.01, max_retries=1)
        run = AgentRun(
            task,
            settings,
            root,
            sink=events.append,
            model_client=client,
            index=index,
            permission=asker("allow_once", asked),
            registry=register_exec_tools(default_registry()),
        )
        result = await run.run()
    assert (
        run.profile.name == "small" and run.conversation.compactor.window == 16_384
    )  # a 16k local server's window
    return result, server.requests, events, asked


async def test_small_profile_prompt_context_up_front_and_a_verified_finish(project: Path) -> None:
    script = [
        act("read_file", path="pkg/calc.py"),
        act("read_file", path="pkg/calc.py"),
        act("edit_file", path="pkg/calc.py", old_text="return a - b", new_text="return a + b"),
        act("task_complete", summary="add() adds again"),
    ]
    result, requests, events, asked = await run_small(project, script)
    system = requests[0]["messages"][0]["content"]
    first, _ = split_at_task(requests[0]["messages"], TASK)
    # A short system prompt: four tools in one line each, edits as SEARCH/REPLACE blocks, examples on a real file.
    assert len(system) < 2500 and "Available Tools:" not in system
    tools = [line.split("(")[0][2:] for line in system.splitlines() if line.startswith("- ") and "(" in line]
    assert tools == ["read_file", "search_text", "run_tests", "task_complete"]
    assert "<<<<<<< SEARCH" in system and ">>>>>>> REPLACE" in system
    assert '"path": "pkg/calc.py"' in system and "src/" not in system
    # The first message: the task, the named tests' failure, and the code at fault with line numbers.
    assert "I ran the tests the task names; they fail now:" in first and "1 failed" in first
    assert "pkg/calc.py lines 1-2 (add):\n1: def add(a, b):\n2:     return a - b" in first
    assert "tests/test_calc.py lines" not in first  # tests are run, not shown as code to fix
    # The conversation only grows at its end (a local server reuses its cached prefix).
    for earlier, later in zip(requests, requests[1:], strict=False):
        assert later["messages"][: len(earlier["messages"])] == earlier["messages"]
    _, observations = split_at_task(requests[-1]["messages"], TASK)
    assert "You made this exact call 2 times" not in observations[0]
    assert "You made this exact call 2 times and nothing changed in between" in observations[1]
    # The edit is a repair step: the named tests run at once, pass, and the run ends with the proposal (the
    # scripted task_complete is never needed).
    assert len(requests) == 3
    edited = [e.data for e in events if e.kind == "tool_result" and e.data["name"] == "edit_file"]
    assert len(edited) == 1 and edited[0]["output"].startswith("Edited pkg/calc.py")
    assert result.success and result.proposal is not None
    assert [c.path for c in result.proposal.changes] == ["pkg/calc.py"]
    assert result.answer == "next\n\nTests pass: `python -m pytest tests/test_calc.py`: 1 passed."
    # up front, after the edit and the whole suite once the named tests pass: each asked
    assert [a[0] for a in asked] == ["run_tests", "run_tests", "run_tests"] and asked[2][1] == {"args": []}
    upfront = [e.data for e in events if e.kind == "tool_result"][0]
    assert upfront["name"] == "run_tests" and "1 failed" in upfront["output"]


async def test_small_profile_leaves_out_tools_and_runs_no_tests_when_none_are_named(project: Path) -> None:
    (project / "pkg" / "big.py").write_text("".join(f"x{i} = {i}\n" for i in range(300)))
    script = [act("list_files"), act("read_file", path="pkg/big.py"), act("task_complete", summary="read")]
    result, requests, events, asked = await run_small(project, script, task="what is x250 in pkg/big.py?")
    task_message, observations = split_at_task(requests[-1]["messages"], "what is x250 in pkg/big.py?")
    assert "unknown tool 'list_files'" in observations[0]
    assert "120: x119 = 119" in observations[1] and "121: x120" not in observations[1]  # shorter reads
    assert "I ran the tests" not in task_message and asked == []
    assert result.success and result.answer == "read"
