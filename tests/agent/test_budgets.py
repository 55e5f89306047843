"""Per-run and per-day token and cost budgets: a clear stop naming the limit, the day's spend kept across runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_support import call, done

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.budgets import SpendLedger, ledger_path, spend_text
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
# gpt-4o-mini has a price in litellm's local cost map: 100k prompt + 1k completion tokens cost about $0.0156.
PRICED_MODEL = "openai/gpt-4o-mini"
BIG = {"prompt_tokens": 100_000, "completion_tokens": 1_000}
STEP = {"content": "looking", "tool_calls": [call("list_files")], "usage": BIG}


async def priced_run(root: Path, script: list[dict], **settings: object) -> tuple:
    """A run of the priced model against the scripted server; (result, events, requests)."""
    events: list[AgentEvent] = []
    with ScriptedModelServer(script) as server:
        config = Settings(model=PRICED_MODEL, api_base=server.base_url, api_key="test", **settings)
        client = ModelClient(config, retry_base=0.01, max_retries=1)
        run = AgentRun("look around", config, root, sink=events.append, model_client=client)
        result = await run.run()
    return result, events, server.requests


async def test_a_per_run_cost_budget_stops_the_run_and_names_the_limit(workspace):
    result, events, requests = await priced_run(workspace, [STEP] * 5 + [done()], cost_budget=0.03)
    assert result.stop_reason == "token_budget" and not result.success
    assert len(requests) == 2 and 0.03 <= result.cost < 0.04
    assert result.error.startswith("cost budget of $0.0300 per run reached ($0.03")
    assert "lspAgent.costBudget" in result.error
    usage = [e.data for e in events if e.kind == "usage"]
    assert (
        spend_text(usage[-1])
        == f"{result.prompt_tokens + result.completion_tokens:,} tokens, ${result.cost:.4f}"
    )


async def test_a_per_run_token_budget_message_says_tokens_per_run(workspace):
    result, _, requests = await priced_run(workspace, [STEP] * 5, token_budget=150_000)
    assert len(requests) == 2 and result.stop_reason == "token_budget"
    assert result.error.startswith("token budget of 150,000 tokens per run reached (202,000 used)")


async def test_the_days_spend_is_kept_across_runs_and_the_daily_cost_budget_stops_the_next_run(workspace):
    first, _, _ = await priced_run(workspace, [STEP, done()])
    today = SpendLedger().today()
    assert today.tokens == first.prompt_tokens + first.completion_tokens and today.cost == first.cost
    second, _, requests = await priced_run(workspace, [done()], daily_cost_budget=0.01)
    assert requests == [], "the day's budget was spent: no model request at all"
    assert second.stop_reason == "token_budget"
    assert second.error.startswith(f"daily cost budget of $0.0100 reached (${first.cost:.4f} spent today)")
    assert "wait until tomorrow" in second.error


async def test_a_daily_token_budget_counts_the_spend_of_earlier_runs(workspace):
    SpendLedger().add(tokens=95_000, cost=0.0)
    result, _, requests = await priced_run(workspace, [STEP, STEP, done()], daily_token_budget=100_000)
    assert len(requests) == 1 and result.stop_reason == "token_budget"
    assert result.error.startswith("daily token budget of 100,000 tokens reached (196,000 used today)")
    assert SpendLedger().today().tokens == 196_000


def test_a_damaged_ledger_counts_as_empty_and_is_rewritten(tmp_path):
    path = tmp_path / "spend.json"
    path.write_text("{not json")
    ledger = SpendLedger(path)
    assert ledger.today().tokens == 0
    assert ledger.add(10, 0.5).tokens == 10
    assert list(json.loads(path.read_text()).values()) == [{"tokens": 10, "cost": 0.5}]


def test_ask_over_the_daily_budget_stops_before_asking_the_model_and_says_which_limit(workspace):
    SpendLedger().add(tokens=5_000, cost=0.0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["LSP_AGENT_DAILY_TOKEN_BUDGET"] = "1000"
    assert ledger_path().is_file()
    with ScriptedModelServer([done()]) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "ask", "fix add", "--repo", str(workspace)]
            + ["--model", "openai/scripted", "--api-base", server.base_url, "--api-key", "test"],
            capture_output=True,
            text=True,
            env=env,
            timeout=90,
        )
        assert server.requests == []
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error: daily token budget of 1,000 tokens reached (5,000 used today)" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("failed (token_budget)")
