"""How a ReAct loop ends (_Outcome) and the exception that ends a whole run (_Stop)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Outcome:
    """How one ReAct loop (the task or one subtask) ended."""

    stop_reason: str
    answer: str
    success: bool
    error: str | None = None


class _Stop(Exception):
    """Ends the whole run (cancellation, permanent model error, token budget)."""

    def __init__(self, stop_reason: str, message: str) -> None:
        super().__init__(message)
        self.stop_reason = stop_reason
