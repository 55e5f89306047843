"""The tool step: one tool call through the permission gate to the tool, reported as tool_call, permission and
tool_result events. A refused, malformed or failing call becomes a failed result for the model, never an exception."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.consent.permissions import PermissionGate, denial_message

if TYPE_CHECKING:
    from lsp_agent.agent.cancellation import Cancellation
    from lsp_agent.agent.conversation.chat import Usage
    from lsp_agent.agent.events import RunEvents
    from lsp_agent.agent.model.parsing import ToolCall
    from lsp_agent.tools.registry import Tool, ToolContext, ToolRegistry, ToolResult

FINISH_TOOL = "task_complete"
EVENT_OUTPUT_CHARS = 4000  # a tool_result event shows this much of the output; the transcript keeps it whole


class ToolStep:
    """Runs a run's tool calls: the registry's tools, or a run style's own action (CodeAct's code)."""

    def __init__(
        self,
        registry: ToolRegistry,
        ctx: ToolContext,
        gate: PermissionGate,
        events: RunEvents,
        cancellation: Cancellation,
        usage: Usage,
    ) -> None:
        self.registry = registry
        self.ctx = ctx
        self.gate = gate
        self.events = events
        self.cancellation = cancellation
        self.usage = usage

    def names(self) -> list[str]:
        """The tool names the model may call."""
        return self.registry.names()

    def schemas(self) -> list[dict[str, Any]]:
        """The tools' JSON schemas (sent with requests in native mode)."""
        return self.registry.schemas()

    def is_finish(self, name: str) -> bool:
        """True for the task_complete tool (also under decorated names)."""
        tool = self._resolve(name)
        return tool is not None and tool.name == FINISH_TOOL

    async def execute(self, call: ToolCall) -> ToolResult:
        """One call of a registry tool (an unknown name gets the registry's list of known tools)."""
        tool = self._resolve(call.name)
        return await self.run(
            call,
            tool.permission if tool is not None else "none",
            lambda: self.registry.execute(call.name, call.arguments, self.ctx),
            tool_name=tool.name if tool is not None else None,
        )

    async def run(
        self,
        call: ToolCall,
        permission: str,
        action: Callable[[], Awaitable[ToolResult]],
        *,
        tool_name: str | None = None,
    ) -> ToolResult:
        """Report the call, ask the gate when `permission` is not "none", then await `action` (cancellable)."""
        from lsp_agent.tools.registry import ToolResult

        self.cancellation.check()
        self.events.emit(
            "tool_call", id=call.id, name=call.name, arguments=call.arguments, iteration=self.usage.requests
        )
        if call.problem is not None:
            result = ToolResult(False, f"Error: {call.problem}.", 0.0)
        elif permission != "none" and (
            refusal := await self._refusal(tool_name or call.name, permission, call)
        ):
            result = ToolResult(False, refusal, 0.0)
        else:
            result = await self.cancellation.guard(action())
        self._report(call, result)
        return result

    async def _refusal(self, tool: str, permission: str, call: ToolCall) -> str | None:
        """None when the gate allows the call, else the message telling the model it was refused."""
        args = call.arguments if isinstance(call.arguments, dict) else {}
        decision = await self.cancellation.guard(self.gate.check(tool, permission, args))
        self.events.emit(
            "permission",
            tool=tool,
            decision="allowed" if decision.allowed else "denied",
            source=decision.source,
            answer=decision.answer,
            reason=permission,
        )
        return None if decision.allowed else denial_message(tool, permission, decision)

    def _report(self, call: ToolCall, result: ToolResult) -> None:
        """The tool_result event: the output cut for front-ends, whole (with the arguments) for the records."""
        output = result.output
        shown = output if len(output) <= EVENT_OUTPUT_CHARS else output[:EVENT_OUTPUT_CHARS] + "\n..."
        self.events.emit(
            "tool_result",
            detail={"output": output, "arguments": call.arguments},
            id=call.id,
            name=call.name,
            ok=result.ok,
            output=shown,
            seconds=result.seconds,
        )

    def _resolve(self, name: str) -> Tool | None:
        """The registry's tool for a (possibly decorated) name."""
        resolve = getattr(self.registry, "resolve_name", None)
        return resolve(name) if resolve else self.registry.get(name)
