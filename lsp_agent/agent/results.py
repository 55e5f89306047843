"""What a run leaves behind: its RunResult, and its Proposal, checked for Python syntax errors in one place."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.workspace.proposal import check_syntax

if TYPE_CHECKING:
    from lsp_agent.agent.conversation import Usage
    from lsp_agent.agent.events import RunEvents
    from lsp_agent.agent.outcome import Outcome
    from lsp_agent.workspace.overlay import Overlay
    from lsp_agent.workspace.proposal import Proposal


@dataclass
class RunResult:
    """How a run ended."""

    success: bool
    answer: str
    stop_reason: str  # complete | no_tool_call | max_iterations | token_budget | refusal | cancelled | error
    iterations: int
    messages: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    proposal: Proposal | None
    error: str | None = None
    finish_reason: str | None = None  # why the last model reply ended (content_filter: a refusal)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(cls, outcome: Outcome, usage: Usage, proposal: Proposal | None) -> RunResult:
        """The result of a run that ended with `outcome`."""
        u = usage
        return cls(
            outcome.success,
            outcome.answer,
            outcome.stop_reason,
            u.requests,
            u.messages,
            u.prompt_tokens,
            u.completion_tokens,
            u.cost,
            proposal,
            outcome.error,
            u.finish_reason,
        )

    def done_data(self, seconds: float) -> dict[str, Any]:
        """The data of the run's `done` event."""
        return {
            "success": self.success,
            "stopReason": self.stop_reason,
            "answer": self.answer,
            "iterations": self.iterations,
            "messages": self.messages,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "cost": self.cost,
            "error": self.error,
            "finishReason": self.finish_reason,
            "seconds": round(seconds, 3),
            "pending": self.proposal is not None,  # offered (the `proposal` event) and awaiting consent
        }


class ProposalCheck:
    """The overlay's changes as a Proposal and their Python syntax errors, checked once per state of the overlay."""

    def __init__(self, overlay: Overlay, events: RunEvents) -> None:
        self.overlay = overlay
        self.events = events
        self._checked: tuple[dict[str, str | None], Proposal, list[str]] | None = None
        self._reported = False

    def current(self) -> tuple[Proposal, list[str]]:
        """(proposal, syntax errors) of the overlay as it is now."""
        state = self.overlay.overrides()
        if self._checked is None or self._checked[0] != state:
            proposal = self.overlay.to_proposal()
            self._checked = (state, proposal, check_syntax(proposal))
        return self._checked[1], self._checked[2]

    def syntax_report(self) -> str | None:
        """Before finishing: the report on proposed Python files that do not parse, once per run (else None)."""
        if self._reported:
            return None
        problems = self.current()[1]
        if not problems:
            return None
        self._reported = True
        self.events.emit(
            "error", message="proposal has Python syntax errors: " + "; ".join(problems), kind="syntax"
        )
        return prompts.syntax_error_report(problems)

    def offer(self, summary: str) -> Proposal | None:
        """The run's proposal with `summary`, announced as the `proposal` event; None when nothing changed."""
        checked, errors = self.current()
        if checked.is_empty():
            return None
        proposal = dataclasses.replace(checked, summary=summary)
        self.events.emit("proposal", detail={"proposal": proposal}, **proposal.to_dict(), syntaxErrors=errors)
        return proposal
