"""Loop detection for small models: the same successful call again, with nothing changed since, gets a nudge.

(The run itself already nudges a call that fails the same way twice.) A small model that reads the same lines
three times is stuck; its observation says so and names what would move the task forward.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from lsp_agent.tools.registry import Tool, ToolContext, ToolRegistry

FINISH_TOOL = "task_complete"


def repeat_note(times: int) -> str:
    """The nudge appended to a repeated call's observation."""
    return (
        f"\n[You made this exact call {times} times and nothing changed in between, so the result is the same. "
        "Do not repeat it: edit the code with edit_file, look at a different place, or call task_complete.]"
    )


class RepeatTracker:
    """Counts identical calls made while the proposal stays unchanged."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.state: tuple[str, ...] | None = None

    def count(self, ctx: ToolContext, name: str, arguments: dict[str, Any]) -> int:
        """How often this call was made since the proposal last changed (this one included)."""
        paths = sorted(ctx.overlay.changed_paths())
        state = tuple(paths) + tuple(
            str(hash(ctx.overlay.read_text(p))) for p in paths if ctx.overlay.is_file(p)
        )
        if state != self.state:
            self.state, self.seen = state, {}
        key = name + "\0" + json.dumps(arguments, sort_keys=True, default=str)
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key]

    def forget(self) -> None:
        """Start counting afresh (after calls the model never saw, such as the sampled line repairs')."""
        self.seen, self.state = {}, None


def _tracked(tool: Tool, tracker: RepeatTracker) -> Tool:
    """`tool` whose output gets a repeat note on the second identical call."""
    original = tool.function
    is_async = inspect.iscoroutinefunction(original)

    async def run(ctx: ToolContext, **arguments: Any) -> Any:
        times = tracker.count(ctx, tool.name, arguments)
        if is_async:
            output = await original(ctx, **arguments)
        else:
            output = await asyncio.to_thread(original, ctx, **arguments)
        if times >= 2 and isinstance(output, str):
            output += repeat_note(times)
        return output

    return Tool(tool.name, tool.description, tool.parameters, run, permission=tool.permission)


def add_repeat_detection(registry: ToolRegistry) -> RepeatTracker:
    """Wrap every tool but task_complete with one shared tracker."""
    tracker = RepeatTracker()
    for tool in registry.tools():
        if tool.name != FINISH_TOOL:
            registry.register(_tracked(tool, tracker), replace=True)
    return tracker
