"""How `lsp-agent ask` shows a run on a terminal: its events as they come, the proposal's diff, colour on a tty."""

from __future__ import annotations

import asyncio
import io
import sys
from typing import TextIO

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.live_text import LivePiece, LiveText
from lsp_agent.agent.model.sanitize import clean_text

COLORS = {
    "thought": "36",  # cyan
    "tool_call": "33",  # yellow
    "tool_ok": "32",  # green
    "tool_failed": "31",  # red
    "error": "31",
    "plan": "35",  # magenta
    "subtask": "35",
    "dim": "2",
    "bold": "1",
}


class Printer:
    """An event sink that prints a run compactly; colour only on a terminal."""

    def __init__(self, out: TextIO, color: bool, err: TextIO | None = None) -> None:
        self.out = out
        self.err = (
            err or sys.stderr
        )  # warnings that are not part of the run (an MCP server that did not start)
        self.color = color
        self.errors_shown: set[str] = set()  # final error messages already printed (the report skips them)
        self._last_retry = ""
        self.live: LiveText | None = None  # the model's words as they come (stream_live)
        self._line_open = False  # live text was printed without its line end yet
        self._live_channel = ""  # the channel of the last live piece (message or thought)
        self._held = ""  # line ends that ended the last live piece, printed once more text comes

    def paint(self, text: str, style: str) -> str:
        """Text in an ANSI colour when colour is on."""
        return f"\033[{COLORS[style]}m{text}\033[0m" if self.color else text

    def write(self, text: str) -> None:
        """Print a line; text the terminal cannot encode (lone surrogates, say) is shown escaped, never raised."""
        if self._line_open:
            self._line_open = False
            text = "\n" + text
        print(clean_text(text), file=self.out, flush=True)

    def stream_live(self, interval_ms: int) -> bool:
        """Print the model's words as they come, at most every `interval_ms` (call on the run's event loop)."""
        if interval_ms > 0:
            schedule = asyncio.get_running_loop().call_later
            self.live = LiveText(self._show_live, interval_ms / 1000, schedule=schedule)
        return self.live is not None

    def _show_live(self, piece: LivePiece) -> None:
        """One coalesced piece of a reply, growing a `thought:` line as the step's whole text used to be shown.

        Line ends at the end of a piece wait for more text (the reply's own last line end is not printed twice)."""
        text = f"thought: {piece.text.lstrip()}" if piece.first else piece.text
        if not piece.first and piece.channel != self._live_channel and text.strip():
            text = text.lstrip("\n")
            self._held = self._held or "\n"  # the reasoning's end: what follows is a line of its own
        self._live_channel = piece.channel
        body = text.rstrip("\n")
        if body:
            shown, self._held = self._held + self.paint(body, "thought"), text[len(body) :]
        else:
            shown, self._held = "", self._held + text
        if piece.final:
            self._held = ""
        print(clean_text(shown), end="\n" if piece.final else "", file=self.out, flush=True)
        self._line_open = not piece.final

    def __call__(self, event: AgentEvent) -> None:
        kind = event.kind
        if self.live is not None and self.live.on_event(kind, event.data):
            return  # streamed text: printed by _show_live, throttled
        if kind == "thought" and self.live is not None and event.data.get("iteration") in self.live.streamed:
            return  # its words were printed as they came
        if kind == "usage":  # the running spend, after each model reply
            from lsp_agent.agent.model.budgets import spend_text

            self.write(self.paint(f"  [{spend_text(event.data)} so far]", "dim"))
            return
        if kind in ("proposal", "done"):
            return  # shown once at the end
        if kind == "error" and event.data.get("retrying"):
            self.write(self.paint(self._retry_text(event), "dim"))
            return
        if kind == "error" and event.data.get("kind") == "mcp":
            print(clean_text(f"warning: {event.data.get('message')}"), file=self.err, flush=True)
            return
        if kind == "error":
            self.errors_shown.add(str(event.data.get("message")))
        text = event.to_text()
        if kind == "thought":
            text = self.paint(text, "thought")
        elif kind == "tool_call":
            text = self.paint(text, "tool_call")
        elif kind == "tool_result":
            text = self.paint(text, "tool_ok" if event.data.get("ok") else "tool_failed")
        elif kind in ("error", "permission") and not event.data.get("retrying"):
            text = self.paint(text, "error" if kind == "error" else "dim")
        elif kind in ("plan", "subtask"):
            text = self.paint(text, kind)
        elif kind in ("start", "compaction"):
            text = self.paint(text, "dim")
        self.write(text)

    def _retry_text(self, event: AgentEvent) -> str:
        """A retry notice; the reason is shown once, later retries for the same reason only say when."""
        data = event.data
        reason = str(data.get("reason") or data.get("message"))
        when = f"retry {data.get('attempt', '?')} in {float(data.get('delay') or 0):.1f}s"
        if reason == self._last_retry:
            return f"  {when} (same error)"
        self._last_retry = reason
        return f"model request failed: {reason}; {when}"


def colored_diff(diff: str, printer: Printer) -> str:
    """A unified diff with + lines green and - lines red on a terminal."""
    if not printer.color:
        return diff.rstrip("\n")
    lines = []
    for line in diff.rstrip("\n").splitlines():
        if line.startswith(("+++", "---")):
            lines.append(printer.paint(line, "bold"))
        elif line.startswith("+"):
            lines.append(printer.paint(line, "tool_ok"))
        elif line.startswith("-"):
            lines.append(printer.paint(line, "tool_failed"))
        elif line.startswith("@@"):
            lines.append(printer.paint(line, "thought"))
        else:
            lines.append(line)
    return "\n".join(lines)


def strict_printer() -> Printer:
    """A Printer into a strict UTF-8 stream that raises where a terminal would (for fuzzing the events)."""
    return Printer(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), color=False)
