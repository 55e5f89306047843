"""Control flow of a run: how a loop ends (Outcome) and the three exceptions that steer it.

The loop (AgentRun.solve) asks the model, lets the run style act on the reply, and appends what came of it. A style
says "ask again, after these messages" with Correction, "the task is finished" with TaskFinished; anything that ends
the whole run (cancellation, a permanent model error, the token budget) raises StopRun.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Outcome:
    """How one loop (the task or one subtask) ended."""

    stop_reason: str  # complete | no_tool_call | max_iterations | token_budget | refusal | cancelled | error
    answer: str
    success: bool
    error: str | None = None


class Correction(Exception):
    """The reply could not be acted on as it stands: append `messages` (what went wrong) and ask again."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        super().__init__(messages[-1].get("content", "") if messages else "")
        self.messages = list(messages)


class TaskFinished(Exception):
    """The model finished the task: append `messages` (the last observations) and end the loop with `outcome`."""

    def __init__(self, outcome: Outcome, *messages: dict[str, Any]) -> None:
        super().__init__(outcome.answer)
        self.outcome = outcome
        self.messages = list(messages)


class StopRun(Exception):
    """Ends the whole run, subtasks included: cancellation, a permanent model error, the token budget, a refusal."""

    def __init__(self, stop_reason: str, message: str) -> None:
        super().__init__(message)
        self.stop_reason = stop_reason


def cancelled() -> StopRun:
    """The StopRun of a cancelled run."""
    return StopRun("cancelled", "the run was cancelled")
