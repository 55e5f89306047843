"""The model's text as it streams, for ACP: message text, thought text, and tool-call markup held back.

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

THOUGHT_OPEN = ("<thought>", "&lt;thought&gt;")
THOUGHT_CLOSE = ("</thought>", "&lt;/thought&gt;")
ACTION_OPEN = ("<action>", "&lt;action&gt;", "<tool_call>", "```tool_call", "<function=")
ALL_TAGS = THOUGHT_OPEN + THOUGHT_CLOSE + ACTION_OPEN


@dataclass
class Live:
    """An update sent to the client now but not kept for session/load (one streamed piece)."""

    update: Any


@dataclass
class ForHistory:
    """An update kept for session/load only (a streamed reply, whole, in place of its pieces)."""

    update: Any


@dataclass
class MarkupSplitter:
    """Splits one reply's deltas into ("message" | "thought", text) pieces; hides everything from an action tag on."""

    tagged: bool  # tools in the prompt: the reply is THOUGHT/ACTION markup
    channel: str = "message"  # message | thought | action
    held: str = ""  # the end of the text so far that may be the start of a tag

    def feed(self, text: str) -> list[tuple[str, str]]:
        """The pieces of `text` that can be shown now."""
        if not self.tagged:
            return [("message", text)] if text else []
        if self.channel == "action":
            return []
        buffer, self.held = self.held + text, ""
        pieces: list[tuple[str, str]] = []
        while self.channel != "action":
            found = _first_tag(buffer)
            if found is None:
                break
            start, tag = found
            pieces.append((self.channel, buffer[:start]))
            buffer = buffer[start + len(tag) :]
            self.channel = _after(tag)
        if self.channel != "action":
            keep = _partial_tag_length(buffer)
            self.held = buffer[len(buffer) - keep :] if keep else ""
            pieces.append((self.channel, buffer[: len(buffer) - keep]))
        return [(channel, piece) for channel, piece in pieces if piece]

    def flush(self) -> list[tuple[str, str]]:
        """What was held back, at the end of the reply (a lone '<' was no tag after all)."""
        held, self.held = self.held, ""
        return [(self.channel, held)] if held and self.channel != "action" else []


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


def visible_text(text: str, tagged: bool) -> str:
    """The message part of a whole reply (without THOUGHT text and action markup when `tagged`), stripped."""
    splitter = MarkupSplitter(tagged)
    pieces = splitter.feed(text) + splitter.flush()
    return "".join(piece for channel, piece in pieces if channel == "message").strip()


def chunk(channel: str, text: str) -> Any:
    """An agent_message_chunk or agent_thought_chunk of `text`."""
    if channel == "thought":
        return helpers.update_agent_thought_text(text)
    return helpers.update_agent_message_text(text)


def _first_tag(text: str) -> tuple[int, str] | None:
    """(position, tag as written) of the first tag in `text`, case-insensitive."""
    lowered = text.lower()
    best: tuple[int, str] | None = None
    for tag in ALL_TAGS:
        at = lowered.find(tag)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, text[at : at + len(tag)])
    return best


def _after(tag: str) -> str:
    """The channel that follows a tag."""
    tag = tag.lower()
    if tag in THOUGHT_OPEN:
        return "thought"
    if tag in THOUGHT_CLOSE:
        return "message"
    return "action"


def _partial_tag_length(text: str) -> int:
    """The length of the longest end of `text` that is the start of a tag (so it waits for the next delta)."""
    lowered = text.lower()
    for size in range(min(len(lowered), max(map(len, ALL_TAGS)) - 1), 0, -1):
        end = lowered[-size:]
        if any(tag.startswith(end) for tag in ALL_TAGS):
            return size
    return 0
