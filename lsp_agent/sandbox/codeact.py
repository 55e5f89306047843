"""The CodeAct run style: the model answers in seed 003's JSON schema and its code runs in a persistent interpreter."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsp_agent.sandbox.codeact_reply import SCHEMA_TEXT, ReplyError, parse_codeact_reply
from lsp_agent.sandbox.interpreter import InterpreterError
from lsp_agent.sandbox.isolation import SandboxUnavailable

if TYPE_CHECKING:
    from lsp_agent.agent.run import AgentRun

log = logging.getLogger(__name__)

TOOL_NAME = "execute_code"
RESULT_PREFIX = "EXECUTION_RESULT:"
EVENT_OUTPUT_CHARS = 4000

SYSTEM_PROMPT = """You are lsp-agent in CodeAct mode: you solve the task by writing Python code, running it, and \
reading the result, in the code workspace `{root_name}`.

Reply with exactly ONE JSON object and nothing else:
{schema}

- "execute_code": run new Python code given in "code".
- "debug_error": run corrected code (in "code") after an error.
- "provide_answer": finish; "final_answer" is what the user reads. No code.

How the code runs:
- A persistent Python interpreter: variables, imports and functions stay defined from one step to the next.
- print() what you need to see; the value of a final bare expression is shown too.
- The working directory is the workspace, seen through a private view with the edits of this run. Read files with \
open(); files you create, change or delete there become a proposed change that the user reviews before anything \
touches their real files.
- Each step is limited to {timeout:g} seconds; memory and processes are limited; the network may be cut off.
After each step you receive "{prefix}" followed by the output, or the error and its traceback."""


def setup_codeact(run: AgentRun) -> None:
    """Make `run` use the CodeAct loop (AgentRun calls this when settings.style == "codeact")."""
    run.style_loop = codeact_loop


def _timeout(run: AgentRun) -> float:
    """Seconds allowed for one code step."""
    return float(getattr(run.settings, "exec_timeout", None) or 60.0)


async def codeact_loop(run: AgentRun, task_text: str) -> Any:
    """Ask, parse, execute, observe until provide_answer, the limits, or cancellation; returns the run outcome."""
    from lsp_agent.agent.run import _Outcome
    from lsp_agent.sandbox.per_run import close_sandbox

    system = SYSTEM_PROMPT.format(
        root_name=run.root.name, schema=SCHEMA_TEXT, timeout=_timeout(run), prefix=RESULT_PREFIX
    )
    repo_map = await run._repo_map()
    if repo_map:
        system += f"\n\nThe most important files and symbols of the workspace:\n{repo_map}"
    if run.prompt_extra:  # the project's rules (AGENTS.md)
        system += "\n\n" + run.prompt_extra
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": task_text},
    ]
    run.message_count += 2
    described = False
    try:
        for step in range(1, run.settings.max_iterations + 1):
            run._check_stop()
            messages = await run._maybe_compact(messages)
            reply = await run._complete(messages, None)
            messages.append({"role": "assistant", "content": reply.content})
            run.message_count += 1
            try:
                parsed = parse_codeact_reply(reply.content)
            except ReplyError as exc:
                run._emit(
                    "error",
                    message=f"the model's reply does not follow the CodeAct schema: {exc}",
                    kind="parse",
                )
                _observe(
                    run,
                    messages,
                    f"Your reply could not be used: {exc}. Reply with exactly one JSON object:\n{SCHEMA_TEXT}",
                )
                continue
            if parsed.thought:
                run._last_text = parsed.thought
                run._emit("thought", text=parsed.thought, iteration=run.iterations)
            if parsed.action == "provide_answer":
                if run._report_syntax_once(messages, None):
                    continue
                return _Outcome("complete", parsed.final_answer or "", True)
            output, ok, seconds = await _execute(run, parsed.code or "", step, first=not described)
            described = described or ok is not None
            _observe(run, messages, output)
        return _Outcome(
            "max_iterations",
            run._last_text or f"stopped after {run.settings.max_iterations} iterations",
            False,
        )
    finally:
        ctx = getattr(run, "ctx", None)
        if ctx is not None:  # the changes are in the overlay already: stop the interpreter, drop the copy
            try:
                await asyncio.shield(asyncio.to_thread(close_sandbox, ctx))
            except asyncio.CancelledError:
                close_sandbox(ctx)
                raise


def _observe(run: AgentRun, messages: list[dict[str, Any]], text: str) -> None:
    """Append an execution result (a user message: providers reject system messages mid-conversation)."""
    messages.append({"role": "user", "content": f"{RESULT_PREFIX}\n{text}"})
    run.message_count += 1


async def _execute(run: AgentRun, code: str, step: int, *, first: bool) -> tuple[str, bool | None, float]:
    """Permission check, then one step in the persistent interpreter; returns (observation, ok, seconds)."""
    from lsp_agent.agent.permissions import denial_message
    from lsp_agent.sandbox.per_run import sandbox_for

    call_id = f"codeact-{step}"
    arguments = {"code": code}
    run._emit("tool_call", id=call_id, name=TOOL_NAME, arguments=arguments, iteration=run.iterations)
    decision = await run._guard(run.gate.check(TOOL_NAME, "exec", arguments))
    run._emit(
        "permission",
        tool=TOOL_NAME,
        decision="allowed" if decision.allowed else "denied",
        source=decision.source,
        answer=decision.answer,
        reason="exec",
    )
    if not decision.allowed:
        text = denial_message(TOOL_NAME, "exec", decision)
        _report(run, call_id, False, text, 0.0)
        return text, None, 0.0
    timeout = _timeout(run)
    overlay = run.overlay
    try:
        sandbox = await asyncio.to_thread(sandbox_for, run.ctx)  # the first use probes the machine
        interpreter = await run._guard(asyncio.to_thread(sandbox.interpreter, overlay, timeout=timeout))
        result = await run._guard(asyncio.to_thread(interpreter.execute, code, overlay, cancel=run._cancel))
    except (InterpreterError, SandboxUnavailable) as exc:
        text = run.ctx.redact(f"Error: {exc}")
        _report(run, call_id, False, text, 0.0)
        return text, False, 0.0
    text = run.ctx.redact(result.format(timeout))  # like every tool observation (ToolRegistry.execute)
    if first:
        text += "\n--- sandbox ---\n" + "\n".join(sandbox.describe(interpreter.limits))
    _report(run, call_id, result.ok, text, result.seconds)
    return text, result.ok, result.seconds


def _report(run: AgentRun, call_id: str, ok: bool, output: str, seconds: float) -> None:
    """Emit the tool_result event (the ReAct loop's shape) and write the transcript line."""
    shown = output if len(output) <= EVENT_OUTPUT_CHARS else output[:EVENT_OUTPUT_CHARS] + "\n..."
    run._emit("tool_result", id=call_id, name=TOOL_NAME, ok=ok, output=shown, seconds=seconds)
    run.transcript.write("tool", name=TOOL_NAME, ok=ok, output=output, seconds=round(seconds, 4))
