"""Hundreds of hostile model replies through the real loop (AgentRun over litellm's HTTP path): no crash, no hang.

benchmarks/reliability_model.py pushes thousands of the same replies and prints the figures.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings

from lsp_agent.agent.model.client import get_litellm
from lsp_agent.cli.printer import strict_printer
from lsp_agent.testing.reply_fuzz import HUGE, drive, reply_script
from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.slow
EXAMPLES = 200


@pytest.fixture(scope="module")
def loop():
    """One event loop for every example (litellm keeps its HTTP session per loop)."""
    get_litellm()
    loop = asyncio.new_event_loop()
    yield loop
    loop.run_until_complete(get_litellm().close_litellm_async_clients())  # before their loop goes away
    loop.close()


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A small project the hostile tool calls may read and (in the overlay) write."""
    root = tmp_path_factory.mktemp("fuzz") / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "README.md").write_text("# proj\n")
    return root


@pytest.fixture(scope="module")
def server():
    """One scripted server, its script replaced for every example (litellm keeps one client per API base)."""
    with ScriptedModelServer([]) as server:
        yield server


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(script=reply_script())
@example(
    script=("prompt", [{"content": '<tool_call>{"name": "final_answer", "arguments": {"answer": "42"}}'}])
)
@example(
    script=("native", [{"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": HUGE}}]}])
)
@example(
    script=("prompt", [{"content": f'<tool_call>{{"name": "read_file", "arguments": {{"path": "{HUGE}"}}}}'}])
)
@example(
    script=("prompt", [{"content": '<tool_call>{"name": "read_file", "arguments": ["\\ud800"]}</tool_call>'}])
)
@example(
    script=("native", [{"content": "\ud800\x00", "tool_calls": [{"name": "\ud800", "arguments": '{"a":'}]}])
)
def test_hostile_replies_never_crash_or_hang_the_loop(loop, server, root, script):
    mode, steps = script
    verdict = loop.run_until_complete(drive(server, mode, steps, root, timeout=60, printer=strict_printer()))
    assert not verdict.hang, f"the run hung on {steps!r:.500}"
    assert not verdict.crash, f"{verdict.crash} on {steps!r:.500}"
