"""Hypothesis strategies for hostile model replies, and a driver that pushes them through a real agent run.

Used by tests/reliability (a few hundred replies) and benchmarks/reliability_model.py (thousands). A reply is a
scripted-server step (see scripted_model): garbage text, truncated JSON, unknown tools, wrong argument types,
huge arguments, NUL and lone surrogates, unclosed tags, in both tool-calling modes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from lsp_agent.agent.events import AgentEvent, EventSink
from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer

TOOL_NAMES = [
    "read_file",
    "list_files",
    "search_code",
    "find_symbol",
    "edit_file",
    "write_file",
    "task_complete",
    "final_answer",
    "no_such_tool",
    "",
    "read_file\x00",
    "\ud800",
]
PARAMETER_NAMES = [
    "path",
    "pattern",
    "query",
    "old_text",
    "new_text",
    "summary",
    "start_line",
    "content",
    "x",
]
NASTY = ["\x00", "\ud800", "\udfff", "\ufffe", "<", ">", "{", "}", '"', "\\", "\n", "</tool_call>", "```"]
HUGE = "x" * 1_000_000

nasty_text = st.lists(st.one_of(st.characters(), st.sampled_from(NASTY)), max_size=60).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | nasty_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(nasty_text, children, max_size=3),
    max_leaves=10,
)
arguments = st.one_of(
    st.dictionaries(st.sampled_from(PARAMETER_NAMES), json_values, max_size=4),
    json_values,  # a list, number or string where an object belongs
)


@st.composite
def call_text(draw: st.DrawFn) -> str:
    """A tool call written as JSON text, sometimes cut short."""
    text = json.dumps({"name": draw(st.sampled_from(TOOL_NAMES)), "arguments": draw(arguments)})
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@st.composite
def reply_text(draw: st.DrawFn) -> str:
    """What a prompt-mode model may write: garbage, or a tool call in one of the accepted forms, maybe broken."""
    call = draw(call_text())
    name = draw(st.sampled_from(TOOL_NAMES))
    forms = [
        draw(nasty_text),
        f"<tool_call>{call}</tool_call>",
        f"<tool_call>{call}",  # unclosed
        f"<THOUGHT>{draw(nasty_text)}</THOUGHT><ACTION>{call}</ACTION>",
        f"<THOUGHT>{draw(nasty_text)}<ACTION>{call}",
        f"```tool_call\n{call}\n```",
        f"Thought: {draw(nasty_text)}\nAction: {name}\nAction Input: {call}",
        f"<function={name}>{call}</function>",
        call,
    ]
    text = draw(st.sampled_from(forms))
    return draw(nasty_text) + text if draw(st.booleans()) else text


@st.composite
def native_step(draw: st.DrawFn) -> dict[str, Any]:
    """A native-mode reply: text and tool calls whose arguments may be broken JSON or not an object."""
    calls = []
    for _ in range(draw(st.integers(0, 2))):
        args = draw(st.one_of(arguments, call_text()))  # a string goes out as raw, possibly invalid, JSON
        calls.append({"name": draw(st.sampled_from(TOOL_NAMES)), "arguments": args})
    step: dict[str, Any] = {"content": draw(st.none() | reply_text())}
    if calls:
        step["tool_calls"] = calls
    return step


@st.composite
def reply_script(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """(tool-calling mode, one or two hostile replies)."""
    mode = draw(st.sampled_from(["native", "prompt"]))
    step = native_step() if mode == "native" else reply_text().map(lambda text: {"content": text})
    steps = draw(st.lists(step, min_size=1, max_size=2))
    for step in steps:
        if draw(st.integers(0, 9)) == 0:
            step["finish_reason"] = "length"
        if draw(st.integers(0, 9)) == 0:
            step["usage"] = False
    return mode, steps


class _ErrorLog(logging.Handler):
    """Collects ERROR records of lsp_agent: a tool bug, a failing sink, an internal error."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()[:300]}")


@dataclass
class Verdict:
    """What one hostile script did to a run: how long it took and what went wrong, if anything."""

    seconds: float
    stop_reason: str = ""
    crash: list[str] = field(default_factory=list)
    hang: bool = False


def _check_event(event: AgentEvent, printer: EventSink | None) -> str | None:
    """Why the event could not reach an editor or a terminal, or None."""
    try:
        json.dumps(event.to_dict(), ensure_ascii=False).encode("utf-8")
        if printer is not None:
            printer(event)
    except Exception as exc:  # noqa: BLE001 - that is the finding
        return f"event {event.kind}: {type(exc).__name__}: {str(exc)[:200]}"
    return None


async def drive(
    server: ScriptedModelServer,
    mode: str,
    steps: list[dict[str, Any]],
    root: Path,
    timeout: float = 60.0,
    printer: EventSink | None = None,
) -> Verdict:
    """Run one agent task against the hostile `steps` (then a plain answer) over HTTP and judge it.

    Every event must serialize as JSON and, when `printer` is given (a terminal's, say), print without raising.
    """
    server.reset([*steps, {"content": "the end"}])
    settings = Settings(
        model="openai/scripted",
        api_base=server.base_url,
        api_key="fuzz",
        tool_calling=mode,
        max_iterations=len(steps) + 1,
        request_timeout=30,
    )
    events: list[AgentEvent] = []
    client = ModelClient(settings, retry_base=0.01, max_retries=1)
    run = AgentRun("fuzz the loop", settings, root, sink=events.append, model_client=client)
    errors = _ErrorLog()
    logger = logging.getLogger("lsp_agent")
    logger.addHandler(errors)
    started = time.monotonic()
    try:
        result = await asyncio.wait_for(run.run(), timeout)
    except TimeoutError:
        return Verdict(time.monotonic() - started, hang=True)
    except Exception as exc:  # noqa: BLE001 - that is the finding
        return Verdict(time.monotonic() - started, crash=[f"run raised {type(exc).__name__}: {exc}"])
    finally:
        logger.removeHandler(errors)
    verdict = Verdict(time.monotonic() - started, result.stop_reason, list(errors.records))
    if result.error and "internal error" in result.error:
        verdict.crash.append(result.error)
    verdict.crash.extend(p for p in (_check_event(e, printer) for e in events) if p)
    if not events or events[-1].kind != "done":
        verdict.crash.append("the run emitted no done event")
    return verdict
