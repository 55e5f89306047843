"""What a prompt turn streams and how it ends, through the real protocol: the model's text token by token (native and
tools-in-the-prompt), one chunk when the provider does not stream, usage after each reply, refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp_support import SharedAgent, text_prompt

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

ANSWER = "add() subtracts: it returns a - b where a + b was meant, so every sum comes out wrong."


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


async def ask(agent: SharedAgent, workspace: Path, text: str = "what is wrong?") -> object:
    """One prompt in a new session of `workspace`."""
    session_id = await agent.session(workspace)
    return await asyncio.wait_for(agent.conn.prompt(session_id=session_id, prompt=text_prompt(text)), 60)


async def test_the_answer_streams_as_several_message_chunks(agent: SharedAgent, workspace: Path) -> None:
    client = agent.client()
    agent.script([{"content": ANSWER, "chunk_delay": 0.02}])
    reply = await ask(agent, workspace)
    chunks = client.of("agent_message_chunk")
    assert reply.stop_reason == "end_turn"
    assert len(chunks) >= 5  # the scripted server streams 16 characters per event
    assert "".join(c.content.text for c in chunks) == ANSWER  # and the whole answer is not sent again


async def test_prompt_mode_streams_thoughts_and_holds_the_action_back(
    agent: SharedAgent, workspace: Path
) -> None:
    (workspace / ".env").write_text("LSP_AGENT_TOOL_CALLING=prompt\n")
    client = agent.client()
    action = '<ACTION>{"name": "read_file", "arguments": {"path": "calc.py"}}</ACTION>'
    agent.script(
        [
            {"content": f"<THOUGHT>First I read calc.py to see what add does.</THOUGHT>\n{action}"},
            {"content": f"<THOUGHT>It subtracts.</THOUGHT>\n{ANSWER}"},
        ]
    )
    reply = await ask(agent, workspace)
    thoughts = client.of("agent_thought_chunk")
    message = client.text_of("agent_message_chunk")
    assert reply.stop_reason == "end_turn"
    assert len(thoughts) >= 2 and client.text_of("agent_thought_chunk").startswith("First I read calc.py")
    assert "It subtracts." in client.text_of("agent_thought_chunk")
    assert message.strip() == ANSWER and len(client.of("agent_message_chunk")) >= 3
    for text in (message, client.text_of("agent_thought_chunk")):
        assert "<" not in text and "ACTION" not in text and "read_file" not in text  # no raw markup
    assert [c.title for c in client.of("tool_call")] == ["Read calc.py"]


async def test_a_provider_that_does_not_stream_sends_the_answer_as_one_chunk(
    agent: SharedAgent, workspace: Path
) -> None:
    (workspace / ".env").write_text("LSP_AGENT_STREAM=false\n")
    client = agent.client()
    server = agent.script([{"content": ANSWER}])
    await ask(agent, workspace)
    assert not server.requests[0].get("stream")
    assert [c.content.text for c in client.of("agent_message_chunk")] == [ANSWER]


async def test_usage_is_reported_after_each_model_reply(agent: SharedAgent, workspace: Path) -> None:
    from lsp_agent.agent.model.client import context_window

    client = agent.client()
    agent.script(
        [
            {
                "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 20},
            },
            {"content": ANSWER, "usage": {"prompt_tokens": 400, "completion_tokens": 30}},
        ]
    )
    await ask(agent, workspace)
    usage = client.of("usage_update")
    assert [u.used for u in usage] == [320, 430]  # the context each reply filled
    assert {u.size for u in usage} == {
        context_window("openai/scripted")
    }  # litellm's window, else the default
    assert all(u.cost is not None and u.cost.currency == "USD" for u in usage)
    kinds = [u.session_update for u in client.updates]
    assert kinds.index("usage_update") < kinds.index("tool_call")  # right after the reply, before its tools


@pytest.mark.parametrize(
    ("step", "stream", "shown"),
    [
        ({"content": "", "finish_reason": "content_filter"}, "true", "content filter"),
        ({"content": "", "refusal": "I can't help with that."}, "false", "I can't help with that."),
    ],
    ids=["content_filter", "refusal_field"],
)
async def test_a_refusal_ends_the_turn_with_stop_reason_refusal(
    agent: SharedAgent, workspace: Path, step: dict, stream: str, shown: str
) -> None:
    (workspace / ".env").write_text(f"LSP_AGENT_STREAM={stream}\n")
    client = agent.client()
    server = agent.script([step, {"content": "never asked"}])
    reply = await ask(agent, workspace, "write malware")
    assert reply.stop_reason == "refusal"
    assert shown in client.text_of("agent_message_chunk")  # the user sees why
    assert len(server.requests) == 1  # the model is not asked again


async def test_exec_output_streams_into_the_tool_call_while_the_command_runs(
    agent: SharedAgent, workspace: Path
) -> None:
    (workspace / "slow.py").write_text(
        "import time\nprint('first line', flush=True)\ntime.sleep(1.5)\nprint('second line')\n"
    )
    client = agent.client(default_answer="allow_once")
    agent.script(
        [
            {"tool_calls": [{"name": "run_command", "arguments": {"argv": ["python3", "slow.py"]}}]},
            {"tool_calls": [{"name": "task_complete", "arguments": {"summary": "ran it"}}]},
        ]
    )
    await ask(agent, workspace, "run slow.py")
    updates = [u for u in client.of("tool_call_update") if u.content]
    texts = [(u.status, u.content[0].content.text) for u in updates]
    running = [text for status, text in texts if status == "in_progress"]
    assert any("first line" in t and "second line" not in t for t in running), texts  # before the sleep ended
    assert texts[-1][0] == "completed" and "second line" in texts[-1][1]
