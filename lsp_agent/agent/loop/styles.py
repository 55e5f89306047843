"""Run styles: how a run turns the model's replies into actions (ReAct tool calls, or CodeAct code), and the
public side of the run (RunHost) that a style may use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lsp_agent.agent.cancellation import Cancellation
    from lsp_agent.agent.conversation.chat import Conversation
    from lsp_agent.agent.events import RunEvents
    from lsp_agent.agent.loop.tool_step import ToolStep
    from lsp_agent.agent.model.client import ModelReply
    from lsp_agent.agent.outcome import Outcome
    from lsp_agent.agent.repair.profile import RunProfile
    from lsp_agent.config import Settings
    from lsp_agent.workspace.overlay import Overlay

Message = dict[str, Any]


class RunHost(Protocol):
    """What a run offers its style: the task, the workspace, the model, the tools, events and the finish check."""

    task: str
    settings: Settings
    root: Path
    overlay: Overlay
    repo_map: str  # the index's map of important files ("" without an index)
    prompt_extra: str  # text a front-end adds to the system prompt
    events: RunEvents
    conversation: Conversation
    tools: ToolStep
    cancellation: Cancellation
    profile: RunProfile  # full or small: how replies become edits, whether an answer may end the run

    def thought(self, text: str) -> None:
        """Report the model's reasoning (kept as the answer of a run that stops early)."""

    def syntax_report(self) -> str | None:
        """Before finishing: the report on proposed Python files that do not parse, once per run (else None)."""

    async def solve(self, task_text: str) -> Outcome:
        """One loop on `task_text` to its end (planning runs one per subtask)."""
        ...


class RunStyle(Protocol):
    """How the model acts: the system prompt, the tools sent with each request, and acting on one reply.

    act() returns the observations to append; it raises Correction to have the model try again after some messages,
    TaskFinished when the task is done, StopRun to end the whole run.
    """

    name: str
    plans: bool  # whether settings.plan splits the task into subtasks for this style

    def system_prompt(self, host: RunHost, mode: str) -> str:
        """The system prompt for tool mode `mode` ("native" or "prompt")."""
        ...

    def tool_schemas(self, host: RunHost) -> list[dict[str, Any]] | None:
        """The tools sent with each request (None: no tools)."""
        ...

    def assistant_message(self, reply: ModelReply) -> Message:
        """The reply as it stays in the conversation."""
        ...

    async def act(self, host: RunHost, reply: ModelReply, messages: list[Message]) -> list[Message]:
        """Act on one reply of the conversation `messages`; returns the observations to append."""
        ...
