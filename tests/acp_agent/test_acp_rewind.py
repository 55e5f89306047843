"""/rewind in ACP (the SDK's client against `lsp-agent acp`): the writes the client approved are journaled per turn,
`/rewind` lists the exchanges, `/rewind N` restores the files written since byte for byte and refuses one changed
since."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_support import SharedAgent, text_prompt

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

BUGGY = "def add(a, b):\n    return a - b  # café"  # no final newline


def call(name: str, **arguments: object) -> dict:
    return {"name": name, "arguments": arguments}


async def prompt(agent: SharedAgent, session_id: str, text: str) -> object:
    return await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=text_prompt(text)), 60)


async def test_rewind_restores_the_approved_writes_and_refuses_a_changed_file(
    agent: SharedAgent, tmp_path: Path
):
    root = tmp_path / "ws"
    root.mkdir()
    calc = root / "calc.py"
    calc.write_bytes(BUGGY.encode())
    client = agent.client(default_answer="allow_once")
    agent.script(
        [
            {"tool_calls": [call("edit_file", path="calc.py", old_text="a - b", new_text="a + b")]},
            {"tool_calls": [call("task_complete", summary="fixed add")]},
            {"tool_calls": [call("edit_file", path="calc.py", old_text="def add", new_text="def plus")]},
            {"tool_calls": [call("write_file", path="NOTES.md", content="renamed\n")]},
            {"tool_calls": [call("task_complete", summary="renamed add")]},
        ]
    )
    session = await agent.session(root)
    await prompt(agent, session, "FIRST: fix add")
    after_first = calc.read_bytes()
    await prompt(agent, session, "SECOND: rename add")
    assert b"def plus" in calc.read_bytes() and (root / "NOTES.md").exists()

    await prompt(agent, session, "/rewind")
    listing = client.text_of("agent_message_chunk")
    assert "1. FIRST: fix add - applied calc.py" in listing
    assert "2. SECOND: rename add - applied calc.py, NOTES.md" in listing

    (root / "NOTES.md").write_text("renamed\nand my note\n")  # changed since the write
    reply = await prompt(agent, session, "/rewind 1")
    assert reply.stop_reason == "end_turn"
    said = client.text_of("agent_message_chunk")
    assert "rewound to exchange 1: 1 later exchange(s) dropped" in said
    assert "- restored calc.py" in said and "- not restored: NOTES.md: changed since the apply" in said
    assert calc.read_bytes() == after_first
    assert (root / "NOTES.md").read_text() == "renamed\nand my note\n"

    await prompt(agent, session, "/rewind 0")
    assert calc.read_bytes() == BUGGY.encode()
    await prompt(agent, session, "/rewind 7")
    assert "Not rewound: no exchange 7" in client.text_of("agent_message_chunk")
