"""A turn whose changes fail the run's own checks (tests, syntax) ends saying so: its last agent message and the
prompt response's _meta (ACP has no stop reason for it; the turn did end: end_turn). Real SDK client, real process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_support import SharedAgent, text_prompt

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

CALC = "def sub(a, b):\n    return a + b\n"
TEST_CALC = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"


def tool(name: str, **arguments: object) -> dict:
    """A script step with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def finish_twice(new_text: str) -> list[dict]:
    """The model edits `a + b` into `new_text` and calls task_complete twice whatever it hears."""
    edit = tool("edit_file", path="calc.py", old_text="a + b", new_text=new_text)
    return [edit, tool("task_complete", summary="fixed"), tool("task_complete", summary="fixed")]


async def turn(agent: SharedAgent, root: Path, script: list[dict]) -> tuple[object, str]:
    """One prompt in a new session of `root` with every question allowed; (response, the agent's message text)."""
    client = agent.client(default_answer="allow_once")
    agent.script(script)
    session_id = await agent.session(root)
    reply = await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=text_prompt("fix sub")), 180
    )
    return reply, client.text_of("agent_message_chunk")


async def test_failing_tests_end_the_turn_saying_the_checks_failed(
    agent: SharedAgent, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    reply, message = await turn(agent, root, finish_twice("a * b"))
    failed = "tests fail: `python -m pytest test_calc.py`: 1 failed"
    assert reply.stop_reason == "end_turn"
    assert reply.field_meta == {"lspAgent": {"status": "checks_failed", "checksFailed": [failed]}}
    assert message.rstrip().endswith(
        f"**Checks failed**: the changes fail the agent's own checks:\n- {failed}"
    )


async def test_a_syntax_error_ends_the_turn_saying_the_checks_failed(
    agent: SharedAgent, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    reply, message = await turn(agent, root, finish_twice("a +* b"))
    (check,) = reply.field_meta["lspAgent"]["checksFailed"]
    assert check.startswith("syntax error: calc.py:2: invalid syntax")
    assert reply.field_meta["lspAgent"]["status"] == "checks_failed" and f"- {check}" in message


async def test_a_turn_whose_tests_pass_says_success(agent: SharedAgent, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    reply, message = await turn(agent, root, finish_twice("a - b")[:2])
    assert reply.field_meta == {"lspAgent": {"status": "success", "checksFailed": []}}
    assert "Checks failed" not in message and (root / "calc.py").read_text() == CALC.replace("+", "-")
