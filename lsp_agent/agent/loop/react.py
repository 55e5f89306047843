"""The ReAct run style (the default): the model calls tools, natively or written in the prompt, until task_complete."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.agent.model.edit_blocks import INCOMPLETE, incomplete_block, parse_edit_block
from lsp_agent.agent.model.parsing import ToolCall, parse_reply
from lsp_agent.agent.outcome import Correction, Outcome, TaskFinished
from lsp_agent.agent.repair.small_prompt import block_correction

if TYPE_CHECKING:
    from lsp_agent.agent.loop.styles import RunHost
    from lsp_agent.agent.model.client import ModelReply

Message = dict[str, Any]


class ReactStyle:
    """Reason, act with tools, observe: tool results go back as tool messages (native) or user messages (prompt)."""

    name = "react"
    plans = True

    def __init__(self) -> None:
        self._failures: dict[str, int] = {}  # call + error -> how often it failed that way in a row

    def system_prompt(self, host: RunHost, mode: str) -> str:
        """The tool-calling system prompt (with the tools described in it in prompt mode)."""
        return prompts.system_prompt(
            mode=mode,
            schemas=host.tools.schemas(),
            root_name=host.root.name,
            repo_map=host.repo_map,
            extra=host.prompt_extra,
        )

    def tool_schemas(self, host: RunHost) -> list[dict[str, Any]]:
        """Every tool of the registry."""
        return host.tools.schemas()

    def assistant_message(self, reply: ModelReply) -> Message:
        """The reply with its tool calls."""
        return reply.message

    async def act(self, host: RunHost, reply: ModelReply, messages: list[Message]) -> list[Message]:
        """Run the reply's tool calls in order; returns their observations."""
        try:
            return await self._act(host, reply, messages)
        except Correction:
            # the small profile counts a reply it had to correct as a failed attempt
            host.profile.after_correction(host, messages)
            raise

    async def _act(self, host: RunHost, reply: ModelReply, messages: list[Message]) -> list[Message]:
        """act() until a Correction or the end."""
        mode = host.conversation.tool_mode
        blocks = host.profile.edit_blocks  # the small profile's SEARCH/REPLACE edits (prompt mode)
        calls, thought, problem, final = interpret(reply, mode, blocks=blocks)
        if (
            not calls
            and problem is None
            and (edit := host.profile.reply_edit(host, reply.content)) is not None
        ):
            calls = [edit]  # small: changed numbered lines written back are an edit
        if thought:
            host.thought(thought)
        if problem is not None:
            host.events.emit(
                "error", message=f"could not parse the model's tool call: {problem}", kind="parse"
            )
            correction = prompts.format_correction(problem, mode, host.tools.names())
            raise Correction(_user(block_correction(problem) if blocks and mode == "prompt" else correction))
        if not calls:
            _finish_without_tools(host, final if final is not None else reply.content.strip(), messages)
        native = mode == "native" and bool(reply.tool_calls)
        observations: list[Message] = []
        finished: str | None = None
        for call in calls:
            result = await host.tools.execute(call)
            output = self._with_repeat_hint(call, result.ok, result.output)
            if result.ok and host.tools.is_finish(call.name):
                if (report := host.syntax_report()) is not None:
                    observations.append(_observation(call if native else None, report))
                    continue
                finished = _summary_of(call, output)
                output = "Task marked complete."
            observations.append(
                _observation(call if native else None, prompts.observation(call.name, output))
            )
        host.profile.after_step(host, messages)  # small: earlier failed attempts leave the conversation
        if finished is None and (verified := host.profile.finished_answer(host)) is not None:
            finished = verified  # the edit made the task's tests pass: the run ends with that proposal
        if finished is not None:
            raise TaskFinished(Outcome("complete", finished, True), *observations)
        return observations

    def _with_repeat_hint(self, call: ToolCall, ok: bool, output: str) -> str:
        """The output, plus a nudge when the very same call failed the same way before."""
        if ok:
            self._failures.clear()
            return output
        key = f"{call.name}\0{json.dumps(call.arguments, sort_keys=True, default=str)}\0{output}"
        self._failures[key] = times = self._failures.get(key, 0) + 1
        if times < 2:
            return output
        return (
            f"{output}\n[This exact call has now failed {times} times with the same error. Do not repeat it: "
            "read the error, look at the file or workspace again, and try a different approach.]"
        )


def interpret(
    reply: ModelReply, mode: str, *, blocks: bool = False
) -> tuple[list[ToolCall], str, str | None, str | None]:
    """(calls, thought, parse problem or None, final answer or None) of a reply in tool mode `mode`; with `blocks`
    a SEARCH/REPLACE block before any <ACTION> is an edit_file call."""
    if blocks and mode == "prompt":
        if (found := parse_edit_block(reply.content)) is not None:
            thought, call = found
            return [call], thought, None, None
        if incomplete_block(reply.content):
            return [], "", INCOMPLETE, None
    if mode == "native":
        if reply.tool_calls:
            return reply.tool_calls, reply.content.strip(), None, None
        # Some native models still write tool calls as text; accept the tagged forms.
        parsed = parse_reply(reply.content, tags_only=True)
        if parsed.calls or parsed.error:
            return parsed.calls, parsed.thought, parsed.error, None
        return [], "", None, reply.content.strip()
    parsed = parse_reply(reply.content)
    if parsed.error is None and not parsed.calls and parsed.final is not None:
        return [], parsed.thought if parsed.thought != parsed.final else "", None, parsed.final
    return parsed.calls, parsed.thought, parsed.error, parsed.final


def _finish_without_tools(host: RunHost, answer: str, messages: list[Message]) -> None:
    """A reply without tool calls ends the task with its text, unless it is empty (asked once to go on)."""
    if not answer and not any(m.get("content") == prompts.EMPTY_REPLY for m in messages):
        raise Correction(_user(prompts.EMPTY_REPLY))
    if (report := host.syntax_report()) is not None:
        raise Correction(_user(report))
    if (reason := host.profile.refusal(host)) is not None:  # small: an answer while the named tests fail
        raise Correction(_user(reason))
    raise TaskFinished(Outcome("no_tool_call", answer, True))


def _observation(call: ToolCall | None, text: str) -> Message:
    """A tool result: a tool message answering the call's id (native), else a user message."""
    if call is not None:
        return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text}
    return _user(text)


def _user(text: str) -> Message:
    """A user message."""
    return {"role": "user", "content": text}


def _summary_of(call: ToolCall, output: str) -> str:
    """The final answer of a task_complete call: its output (the summary, with the test result when tests ran)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return output.strip() or str(arguments.get("summary") or "").strip()
