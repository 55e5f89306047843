"""One run's streamed words to the editor: throttled `lspAgent/event` pieces of kind "text" and the progress message.

The agent's `text_delta` events never reach the editor as they are: `LiveText` (agent/loop/live_text.py) hides the
action markup and coalesces them, so the editor gets at most one `text` event per `liveTextInterval` ms:
`{"runId", "kind": "text", "text", "channel": "message" | "thought", "request", "first", "final"}`. A reply's
`thought` event, when its words were already shown live, carries `"streamed": true` (clients need not repeat it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lsp_agent.agent.loop.live_text import LivePiece, LiveText

PROGRESS_CHARS = 120  # the end of the reply's text shown as the progress message


class EditorLiveText:
    """Forwards one run's events, turning its streamed text into throttled `text` events and progress reports."""

    def __init__(
        self,
        notify: Callable[[dict[str, Any]], None],
        progress: Callable[[str], None],
        interval_ms: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.notify = notify  # sends one `text` payload (runId and kind are added by the caller)
        self.progress = progress  # one line for the run's progress notification
        self.live = LiveText(self._show, interval_ms / 1000, schedule=loop.call_later)
        self._reply_text = ""  # the message text of the reply streaming now (its end is the progress message)

    def forward(self, kind: str, data: dict[str, Any]) -> dict[str, Any] | None:
        """The payload to send for one event as it is, or None when it was streamed text (sent throttled)."""
        if self.live.on_event(kind, data):
            return None
        if kind == "thought" and data.get("iteration") in self.live.streamed:
            return {**data, "streamed": True}
        return data

    def _show(self, piece: LivePiece) -> None:
        """Send one coalesced piece; the progress shows the last line of what the model is writing."""
        if piece.first:
            self._reply_text = ""
        payload = {"kind": "text", "text": piece.text, "channel": piece.channel, "request": piece.request}
        if piece.first:
            payload["first"] = True
        if piece.final:
            payload["final"] = True
        self.notify(payload)
        if piece.channel == "message":
            self._reply_text += piece.text
        shown = self._reply_text if piece.channel == "message" else piece.text
        line = " ".join(shown.strip().splitlines()[-1:])
        if line and not piece.final:
            self.progress(("thinking: " if piece.channel == "thought" else "") + _tail(line))


def _tail(text: str) -> str:
    """The last PROGRESS_CHARS characters of a line, cut at a word."""
    if len(text) <= PROGRESS_CHARS:
        return text
    cut = text[-PROGRESS_CHARS:]
    return "..." + (cut.split(" ", 1)[1] if " " in cut[:30] else cut)


def live_text_for(server: Any, record: Any, interval_ms: int) -> EditorLiveText | None:
    """The live text of a run (a RunRecord of `server`), or None when `liveTextInterval` is 0."""
    if interval_ms <= 0:
        return None

    def notify(payload: dict[str, Any]) -> None:
        server.protocol.notify("lspAgent/event", {"runId": record.run_id, **payload})

    def progress(line: str) -> None:
        if record.progress is not None:
            record.progress.report(f"{line} | {record.spend}" if record.spend else line)

    return EditorLiveText(notify, progress, interval_ms, asyncio.get_running_loop())
