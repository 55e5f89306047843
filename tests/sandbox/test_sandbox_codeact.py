"""CodeAct style end to end (scripted model through litellm): seed 003's example across turns, state kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted, snapshot

from lsp_agent.sandbox.codeact_reply import ReplyError, parse_codeact_reply


@pytest.fixture(scope="module", autouse=True)
def _litellm_once() -> None:
    """Import litellm once for this module."""
    from lsp_agent.agent.model.client import get_litellm

    get_litellm()


def reply(**fields: str) -> dict:
    """A script step whose content is one CodeAct JSON reply."""
    return {"content": json.dumps(fields)}


TASK = "Calculate compound interest at 15k premium, 6% interest compounded semi annually for 6 years"


async def test_compound_interest_across_turns_keeps_state(project: Path) -> None:
    before = snapshot(project)
    script = [
        reply(
            thought="I need to use the compound interest formula A = P(1 + r/n)^(nt)...",
            action="execute_code",
            code="principal = 15000\nrate = 0.06\nfinal_amount = principal * (1 + rate/n)**(n*t)",
        ),
        {"content": "Sure! I will now fix it."},  # malformed: no JSON object
        reply(
            thought="I got an error because I didn't define all variables. Let me fix this...",
            action="debug_error",
            code="n = 2  # semi-annual\nt = 6\nfinal_amount = principal * (1 + rate/n)**(n*t)\n"
            "print(f'Final Amount: ${final_amount:,.2f}')",
        ),
        reply(
            thought="Record the result in the workspace.",
            action="execute_code",
            code="interest = final_amount - principal\n"
            "open('interest.txt', 'w').write(f'{interest:,.2f}\\n')\nprint(f'Interest: ${interest:,.2f}')",
        ),
        reply(
            thought="Perfect! The calculation executed successfully.",
            action="provide_answer",
            final_answer="You would earn $6,386.41 in compound interest, a final amount of $21,386.41.",
        ),
    ]
    out = await run_scripted(project, script, TASK, style="codeact", permission=asker("session"))
    assert out.result.success and out.result.stop_reason == "complete"
    assert out.result.answer.startswith("You would earn $6,386.41")
    results = out.of("tool_result")
    assert [r["name"] for r in results] == ["execute_code"] * 3
    assert "NameError: name 'n' is not defined" in results[0]["output"]
    assert "--- sandbox ---" in results[0]["output"] and "network: " in results[0]["output"]
    assert "Final Amount: $21,386.41" in results[1]["output"]  # principal and rate survived from turn 1
    assert "Interest: $6,386.41" in results[2]["output"]
    assert "interest.txt (created)" in results[2]["output"]
    # The malformed reply got a corrective observation naming the schema.
    corrective = out.requests[2]["messages"][-1]["content"]
    assert "could not be used" in corrective and '"action"' in corrective
    assert any(e["kind"] == "parse" for e in out.of("error"))
    # Execution results go back as seed 003's EXECUTION_RESULT messages.
    assert out.requests[1]["messages"][-1]["content"].startswith("EXECUTION_RESULT:")
    assert {"start", "thought", "tool_call", "permission", "tool_result", "usage", "proposal", "done"} <= set(
        out.kinds
    )
    proposal = out.result.proposal
    assert proposal is not None and proposal.paths() == ["interest.txt"]
    assert proposal.changes[0].new_text == "6,386.41\n"
    assert snapshot(project) == before


async def test_codeact_permission_denied_goes_on(project: Path) -> None:
    script = [
        reply(thought="run it", action="execute_code", code="print('hello')"),
        reply(thought="not allowed", action="provide_answer", final_answer="I could not run code."),
    ]
    out = await run_scripted(project, script, "say hello", style="codeact", permission=asker("deny"))
    assert out.result.success
    result = out.of("tool_result")[0]
    assert not result["ok"] and "Permission denied" in result["output"]
    assert "hello" not in result["output"]


async def test_codeact_stops_at_the_iteration_limit(project: Path) -> None:
    step = reply(
        thought="again", action="execute_code", code="counter = globals().get('counter', 0) + 1\ncounter"
    )
    out = await run_scripted(
        project, [step] * 3, "count", style="codeact", max_iterations=3, permissions={"execute_code": "allow"}
    )
    assert out.result.stop_reason == "max_iterations" and not out.result.success
    assert [r["output"].splitlines()[0] for r in out.of("tool_result")] == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ('{"thought": "x"}', 'no "action"'),
        ('{"action": "dance"}', "must be one of"),
        ('{"action": "execute_code", "code": ""}', '"code"'),
        ('{"action": "provide_answer"}', '"final_answer"'),
    ],
)
def test_malformed_replies_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ReplyError, match=problem):
        parse_codeact_reply(text)


def test_lenient_reply_forms_are_accepted() -> None:
    fenced = 'Here you go:\n```json\n{"thought": "t", "action": "continue_debugging", "code": "```python\nx = 1\n```"}\n```'
    parsed = parse_codeact_reply(fenced)
    assert parsed.action == "debug_error" and parsed.code == "x = 1"
    raw_newlines = (
        '{"action": "execute_code", "code": "a = 1\nprint(a)"}'  # a literal newline inside the string
    )
    assert parse_codeact_reply(raw_newlines).code == "a = 1\nprint(a)"


async def test_codeact_cancel_stops_running_code_and_cleans_up(project: Path) -> None:
    import asyncio
    import time

    from lsp_agent.agent.loop.run import AgentRun
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.config import Settings
    from lsp_agent.sandbox import per_run
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    script = [reply(thought="wait", action="execute_code", code="import time\ntime.sleep(60)")]
    events: list = []
    with ScriptedModelServer(script) as server:
        settings = Settings(
            model="openai/scripted", api_base=server.base_url, api_key="test", style="codeact",
            permissions={"execute_code": "allow"},
        )  # fmt: skip
        run = AgentRun("sleep", settings, project, sink=events.append, model_client=ModelClient(settings))
        task = asyncio.create_task(run.run())
        while not any(e.kind == "tool_call" for e in events):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        started = time.perf_counter()
        run.cancel()
        result = await asyncio.wait_for(task, 10)
    assert result.stop_reason == "cancelled"
    assert time.perf_counter() - started < 3
    assert run.overlay not in per_run._SANDBOXES  # the interpreter and scratch copy are gone
    assert "sandbox" not in run.ctx.extras
