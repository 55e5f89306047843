"""The model's words as they stream, as a user should see them: action markup hidden, deltas coalesced and throttled.

With native tool calling a reply's text is what the model says to the user. With tools in the prompt a reply is
markup (`<THOUGHT>..</THOUGHT><ACTION>{..}</ACTION>`): THOUGHT text is the "thought" channel, text outside the tags
the "message" channel, and from the first action tag on nothing is shown (the action is shown as a tool call once
the reply is parsed). A tag split across deltas is held back until it is whole. Every front-end shares this:
ACP sends each piece as it comes; the language server and the CLI use `LiveText`, which coalesces pieces into at
most one per interval so a fast model does not flood the editor.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

THOUGHT_OPEN = ("<thought>", "&lt;thought&gt;")
THOUGHT_CLOSE = ("</thought>", "&lt;/thought&gt;")
ACTION_OPEN = ("<action>", "&lt;action&gt;", "<tool_call>", "```tool_call", "<function=")
ALL_TAGS = THOUGHT_OPEN + THOUGHT_CLOSE + ACTION_OPEN
# Events after which a reply's text is over (the reply was parsed, retried, or the run ended).
REPLY_ENDS = ("usage", "tool_call", "error", "done", "proposal")


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


def visible_text(text: str, tagged: bool) -> str:
    """The message part of a whole reply (without THOUGHT text and action markup when `tagged`), stripped."""
    splitter = MarkupSplitter(tagged)
    pieces = splitter.feed(text) + splitter.flush()
    return "".join(piece for channel, piece in pieces if channel == "message").strip()


def is_tagged(start: dict[str, Any]) -> bool:
    """True when a run's replies are THOUGHT/ACTION markup (from its `start` event)."""
    return start.get("toolCalling") == "prompt" and start.get("style", "react") == "react"


@dataclass
class LivePiece:
    """Coalesced text of one reply, ready to show: `first` opens the reply, `final` (maybe with no text) ends it."""

    request: int
    channel: str  # message | thought
    text: str
    first: bool = False
    final: bool = False


Schedule = Callable[[float, Callable[[], None]], Any]


@dataclass
class LiveText:
    """Feeds on a run's events; hands `show` the visible text of each reply, at most one piece per `interval` seconds.

    A piece is due when the interval has passed since the last one; text that arrives sooner waits for the next
    delta, for the timer `schedule` sets (e.g. the event loop's call_later), or for the end of the reply.
    """

    show: Callable[[LivePiece], None]
    interval: float = 0.075
    schedule: Schedule | None = None
    clock: Callable[[], float] = time.monotonic
    tagged: bool = False
    streamed: set[int] = field(default_factory=set)  # requests whose text was shown as it streamed
    _request: int | None = None
    _splitter: MarkupSplitter | None = None
    _pending: list[list[str]] = field(default_factory=list)  # [channel, text] runs not shown yet
    _opened: bool = False  # the current reply's first piece went out
    _last: float = float("-inf")
    _timer: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_event(self, kind: str, data: dict[str, Any]) -> bool:
        """Take one event; True when it was streamed text (the caller does not forward it as it is)."""
        if kind == "start":
            self.tagged = is_tagged(data)
        if kind == "text_delta":
            self.feed(int(data.get("request") or 0), str(data.get("text") or ""))
            return True
        if kind in REPLY_ENDS:
            self.end_reply()
        return False

    def feed(self, request: int, text: str) -> None:
        """One delta of reply `request`; a new request ends the reply before it."""
        with self._lock:
            out = self._close() if self._request is not None and self._request != request else []
            if self._request is None:
                self._request, self._splitter = request, MarkupSplitter(self.tagged)
            self._add(self._splitter.feed(text))
            now = self.clock()
            if now - self._last >= self.interval:
                out += self._take(now)
            elif self._pending and not self._timer and self.schedule is not None:
                self._timer = True
                self.schedule(self.interval - (now - self._last), self.flush)
        self._send(out)

    def flush(self) -> None:
        """Show what is waiting now (the timer's callback)."""
        with self._lock:
            self._timer = False
            out = self._take(self.clock())
        self._send(out)

    def end_reply(self) -> None:
        """The reply is over: what it held back, and a final piece."""
        with self._lock:
            out = self._close()
        self._send(out)

    def _add(self, pieces: list[tuple[str, str]]) -> None:
        for channel, text in pieces:
            if self._pending and self._pending[-1][0] == channel:
                self._pending[-1][1] += text
            else:
                self._pending.append([channel, text])

    def _take(self, now: float) -> list[LivePiece]:
        """The waiting runs as pieces (the caller holds the lock)."""
        if not self._pending or self._request is None:
            return []
        self._last = now
        pieces = [LivePiece(self._request, channel, text) for channel, text in self._pending]
        self._pending = []
        if not self._opened:
            pieces[0].first, self._opened = True, True
        self.streamed.add(self._request)
        return pieces

    def _close(self) -> list[LivePiece]:
        """End the current reply (the caller holds the lock)."""
        if self._request is None or self._splitter is None:
            return []
        self._add(self._splitter.flush())
        out = self._take(self.clock())
        if self._opened:
            last = out[-1] if out else LivePiece(self._request, "message", "")
            last.final = True
            out = out or [last]
        self._request, self._splitter, self._opened = None, None, False
        return out

    def _send(self, pieces: list[LivePiece]) -> None:
        for piece in pieces:
            self.show(piece)


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
