"""Model faults met by runs of the language server (pytest-lsp, the real protocol): every run ends with one clear
error in bounded time, and the server goes on answering. The model needs no API key (a keyless local server)."""

from __future__ import annotations

import asyncio
import time

import pytest
from scripted_editor import editor_fixtures, finish_step

from lsp_agent.agent.model.client import PLACEHOLDER_KEY

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
REQUEST_TIMEOUT = 3


def keyless_settings(model) -> dict:
    """Settings for the scripted model with no apiKey: a local server that needs none."""
    return {
        "model": "openai/scripted",
        "apiBase": model.base_url,
        "toolCalling": "native",
        "requestTimeout": REQUEST_TIMEOUT,
    }


model, editor = editor_fixtures({"calc.py": "def add(a, b):\n    return a - b\n"}, keyless_settings)


async def run(editor, model, steps: list[dict], task: str) -> tuple[dict, list[dict], float]:
    """Ask, wait for `done`: (done event, error events, seconds); then check the server still answers."""
    model.add_steps(steps)
    started = time.monotonic()
    run_id = await editor.ask(task)
    done = await editor.wait_event(run_id, "done", timeout=60)
    seconds = time.monotonic() - started
    status = await editor.command("lspAgent.status")
    assert any(r["runId"] == run_id for r in status["runs"])  # the server answers a request after the run
    assert model.remaining == 0
    return done, editor.run_events(run_id, "error"), seconds


def final_errors(errors: list[dict]) -> list[str]:
    return [e["message"] for e in errors if not e.get("retrying")]


async def test_a_keyless_local_server_answers_the_run(editor, model):
    done, errors, _ = await run(editor, model, [finish_step("no key needed")], "keyless")
    assert done["stopReason"] == "complete" and not final_errors(errors)
    assert model.headers[-1]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ({"status": 401, "error": "Incorrect API key provided"}, "authentication failed"),
        ({"status": 404, "error": "The model `scripted` does not exist"}, "was not found"),
        ({"body": "<html>502 Bad Gateway</html>"}, "not a valid chat completion"),
    ],
)
async def test_a_permanent_fault_ends_the_run_at_once_with_one_error(editor, model, fault, expected):
    done, errors, seconds = await run(editor, model, [fault], f"permanent {expected}")
    assert done["stopReason"] == "error" and expected in done["error"]
    assert final_errors(errors) == [done["error"]] and not [e for e in errors if e.get("retrying")]
    assert seconds < 10


@pytest.mark.parametrize(
    "fault",
    [{"status": 500}, {"status": 429, "headers": {"Retry-After": "1"}}, {"hang_up": True}],
    ids=["500", "429", "hang-up"],
)
async def test_a_transient_fault_is_retried_and_the_run_completes(editor, model, fault):
    done, errors, seconds = await run(editor, model, [fault, finish_step("recovered")], f"transient {fault}")
    assert done["stopReason"] == "complete"
    (retry,) = errors
    assert retry["retrying"] and retry["attempt"] == 1
    if "headers" in fault:
        assert retry["delay"] >= 1
    assert seconds < 15


async def test_an_endless_stream_is_cut_at_the_request_timeout_and_its_connection_closed(editor, model):
    before = model.disconnects
    steps = [{"endless": True}, {"status": 401, "error": "Incorrect API key provided"}]
    done, errors, seconds = await run(editor, model, steps, "endless")
    assert done["stopReason"] == "error" and "authentication failed" in done["error"]
    (retry,) = [e for e in errors if e.get("retrying")]
    assert f"did not finish its reply within {REQUEST_TIMEOUT} s" in retry["reason"]
    assert final_errors(errors) == [done["error"]]
    assert REQUEST_TIMEOUT <= seconds < REQUEST_TIMEOUT + 10
    deadline = time.monotonic() + 5
    while model.disconnects == before and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert model.disconnects == before + 1  # the abandoned reply stopped the model server's work


async def test_a_trickling_reply_is_bounded_as_a_whole(editor, model):
    steps = [{"content": "slowly", "trickle": 0.5}, finish_step("after the slow one")]
    done, errors, seconds = await run(editor, model, steps, "trickle")
    assert done["stopReason"] == "complete"
    (retry,) = errors
    assert "did not finish its reply" in retry["reason"] and seconds < REQUEST_TIMEOUT + 10
