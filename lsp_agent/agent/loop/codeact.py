"""The CodeAct run style: the model answers in seed 003's JSON schema and its code runs in the run's persistent
sandboxed interpreter. A run style belongs to the agent; the sandbox below it knows nothing of runs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.model.parsing import ToolCall
from lsp_agent.agent.outcome import Correction, Outcome, TaskFinished
from lsp_agent.sandbox.codeact_reply import SCHEMA_TEXT, ReplyError, parse_codeact_reply
from lsp_agent.sandbox.interpreter import InterpreterError
from lsp_agent.sandbox.isolation import SandboxUnavailable

if TYPE_CHECKING:
    from lsp_agent.agent.loop.styles import RunHost
    from lsp_agent.agent.model.client import ModelReply
    from lsp_agent.tools.registry import ToolResult

TOOL_NAME = "execute_code"
RESULT_PREFIX = "EXECUTION_RESULT:"
Message = dict[str, Any]

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


class CodeActStyle:
    """The model writes Python; each step runs in the run's persistent sandboxed interpreter (permission "exec")."""

    name = "codeact"
    plans = False

    def __init__(self) -> None:
        self._described = False  # the first step that ran shows the sandbox's limits
        self._steps = 0

    def system_prompt(self, host: RunHost, mode: str) -> str:
        """Seed 003's CodeAct prompt (the same in both tool modes: no tools are sent)."""
        system = SYSTEM_PROMPT.format(
            root_name=host.root.name, schema=SCHEMA_TEXT, timeout=_timeout(host), prefix=RESULT_PREFIX
        )
        if host.repo_map:
            system += f"\n\nThe most important files and symbols of the workspace:\n{host.repo_map}"
        if host.prompt_extra:  # the project's rules (AGENTS.md)
            system += "\n\n" + host.prompt_extra
        return system

    def tool_schemas(self, host: RunHost) -> None:
        """No native tools: the code is the action."""
        return None

    def assistant_message(self, reply: ModelReply) -> Message:
        """The reply's text only (tool calls the model made up anyway have no place here)."""
        return {"role": "assistant", "content": reply.content}

    async def act(self, host: RunHost, reply: ModelReply, messages: list[Message]) -> list[Message]:
        """Parse the JSON reply; run its code, or finish with its answer."""
        self._steps += 1
        try:
            parsed = parse_codeact_reply(reply.content)
        except ReplyError as exc:
            host.events.emit(
                "error", message=f"the model's reply does not follow the CodeAct schema: {exc}", kind="parse"
            )
            raise Correction(
                _result(
                    f"Your reply could not be used: {exc}. Reply with exactly one JSON object:\n{SCHEMA_TEXT}"
                )
            ) from None
        if parsed.thought:
            host.thought(parsed.thought)
        if parsed.action == "provide_answer":
            if (report := host.syntax_report()) is not None:
                raise Correction({"role": "user", "content": report})
            raise TaskFinished(Outcome("complete", parsed.final_answer or "", True))
        call = ToolCall(name=TOOL_NAME, arguments={"code": parsed.code or ""}, id=f"codeact-{self._steps}")
        result = await host.tools.run(call, "exec", lambda: self._execute(host, parsed.code or ""))
        return [_result(result.output)]

    async def _execute(self, host: RunHost, code: str) -> ToolResult:
        """One step in the persistent interpreter (started on first use); failures become a failed result."""
        from lsp_agent.sandbox.per_run import sandbox_for
        from lsp_agent.tools.registry import ToolResult

        ctx, guard, timeout = host.tools.ctx, host.cancellation.guard, _timeout(host)
        try:
            sandbox = await asyncio.to_thread(sandbox_for, ctx)  # the first use probes the machine
            interpreter = await guard(asyncio.to_thread(sandbox.interpreter, host.overlay, timeout=timeout))
            result = await guard(
                asyncio.to_thread(interpreter.execute, code, host.overlay, cancel=host.cancellation.flag)
            )
        except (InterpreterError, SandboxUnavailable) as exc:
            self._described = True
            return ToolResult(False, ctx.redact(f"Error: {exc}"), 0.0)
        text = ctx.redact(result.format(timeout))  # like every tool observation (ToolRegistry.execute)
        if not self._described:
            self._described = True
            text += "\n--- sandbox ---\n" + "\n".join(sandbox.describe(interpreter.limits))
        return ToolResult(result.ok, text, result.seconds)


def _timeout(host: RunHost) -> float:
    """Seconds allowed for one code step."""
    return float(getattr(host.settings, "exec_timeout", None) or 60.0)


def _result(text: str) -> Message:
    """An execution result (a user message: providers reject system messages mid-conversation)."""
    return {"role": "user", "content": f"{RESULT_PREFIX}\n{text}"}
