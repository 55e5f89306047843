"""The model's text as it streams, for ACP: message text, thought text, and tool-call markup held back.

The splitting itself is shared with the other front-ends (agent/loop/live_text.py); here it becomes session updates.

With native tool calling the model's text is what it says to the user: every delta is an agent_message_chunk.
With tools in the prompt the reply is markup (`<THOUGHT>..</THOUGHT><ACTION>{..}</ACTION>`): THOUGHT text streams as
agent_thought_chunk, text outside the tags as agent_message_chunk, and from the first action tag on nothing is
streamed (the action becomes a tool_call card once the reply is parsed). A tag split across deltas is held back
until it is whole. CodeAct's replies (prose and code) stream as message text. A reply cut off and retried streams
again from its start, after the retry notice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp import helpers

from lsp_agent.agent.loop.live_text import MarkupSplitter, visible_text

__all__ = ["ForHistory", "Live", "MarkupSplitter", "ReplyStream", "chunk", "visible_text"]


@dataclass
class Live:
    """An update sent to the client now but not kept for session/load (one streamed piece)."""

    update: Any


@dataclass
class ForHistory:
    """An update kept for session/load only (a streamed reply, whole, in place of its pieces)."""

    update: Any


@dataclass
class ReplyStream:
    """One model reply streaming to the client: its splitter and the text shown so far, per channel and in order."""

    request: int
    splitter: MarkupSplitter
    parts: list[list[str]] = field(default_factory=list)  # [channel, text] runs in the order they streamed

    def add(self, channel: str, text: str) -> None:
        """Note a piece that was sent."""
        if self.parts and self.parts[-1][0] == channel:
            self.parts[-1][1] += text
        else:
            self.parts.append([channel, text])

    @property
    def message(self) -> str:
        """The message text this reply showed."""
        return "".join(text for channel, text in self.parts if channel == "message")

    def history(self) -> list[ForHistory]:
        """The reply as a few whole chunks for session/load (not one per delta)."""
        return [ForHistory(chunk(channel, text)) for channel, text in self.parts if text.strip()]


def chunk(channel: str, text: str) -> Any:
    """An agent_message_chunk or agent_thought_chunk of `text`."""
    if channel == "thought":
        return helpers.update_agent_thought_text(text)
    return helpers.update_agent_message_text(text)
