"""What a run leaves behind: its RunResult, and its Proposal with the run's own checks (syntax, tests) on it.

A run whose proposal fails its own checks at the end (the tests it ran before finishing, the syntax check) is no
success: its result says `checks_failed`, its status is "checks_failed", and the proposal carries the failures.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.tools.syntax_check import syntax_errors
from lsp_agent.workspace.proposal import FileChange, Proposal

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.chat import Usage
    from lsp_agent.agent.events import RunEvents
    from lsp_agent.agent.outcome import Outcome
    from lsp_agent.workspace.overlay import Overlay

FINISHED = ("complete", "no_tool_call")  # how a run that finished its task ends (the others stop it early)


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
    checks_failed: list[str] = field(
        default_factory=list
    )  # the run's own checks its proposal fails at the end

    @property
    def status(self) -> str:
        """success | checks_failed (finished, but the proposal fails its own checks) | cancelled | failed."""
        if self.stop_reason == "cancelled":
            return "cancelled"
        if self.checks_failed and self.stop_reason in FINISHED:
            return "checks_failed"
        return "success" if self.success else "failed"

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(
        cls, outcome: Outcome, usage: Usage, proposal: Proposal | None, checks_failed: list[str] | None = None
    ) -> RunResult:
        """The result of a run that ended with `outcome`; failed checks make it no success."""
        u = usage
        return cls(
            outcome.success and not checks_failed,
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
            list(checks_failed or []),
        )

    def done_data(self, seconds: float) -> dict[str, Any]:
        """The data of the run's `done` event."""
        return {
            "success": self.success,
            "status": self.status,
            "checksFailed": list(self.checks_failed),
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
    """The overlay's changes as a Proposal and the syntax errors they introduced, checked once per state."""

    def __init__(self, overlay: Overlay, events: RunEvents) -> None:
        self.overlay = overlay
        self.events = events
        self._checked: tuple[list[FileChange], Proposal, list[str]] | None = None
        self._reported = False

    def current(self) -> tuple[Proposal, list[str]]:
        """(proposal, syntax errors) of the overlay as it is now."""
        checked = self.overlay.checked_changes()  # the proposal's, and changes already written with consent
        if self._checked is None or self._checked[0] != checked:
            self._checked = (checked, self.overlay.to_proposal(), syntax_errors(checked))
        return self._checked[1], self._checked[2]

    def syntax_report(self) -> str | None:
        """Before finishing: the report on proposed files that no longer parse, once per run (else None)."""
        if self._reported:
            return None
        problems = self.current()[1]
        if not problems:
            return None
        self._reported = True
        self.events.emit("error", message="proposal has syntax errors: " + "; ".join(problems), kind="syntax")
        return prompts.syntax_error_report(problems)

    def failed_checks(self, tests_failing: str | None) -> list[str]:
        """The run's own checks the proposal fails as it is now: its syntax errors, then the tests (their report
        when they last ran on exactly this proposal and failed); none when nothing is proposed."""
        errors = self.current()[1]
        if not self.overlay.checked_changes():
            return []
        failed = [f"syntax error: {problem}" for problem in errors]
        return failed + ([f"tests fail: {tests_failing}"] if tests_failing else [])

    def offer(self, summary: str, checks_failed: list[str] | None = None) -> Proposal | None:
        """The run's proposal with `summary` and the checks it fails, announced as the `proposal` event; None when
        nothing changed."""
        checked, errors = self.current()
        if checked.is_empty():
            return None
        proposal = dataclasses.replace(checked, summary=summary, checks_failed=list(checks_failed or []))
        self.events.emit("proposal", detail={"proposal": proposal}, **proposal.to_dict(), syntaxErrors=errors)
        return proposal
