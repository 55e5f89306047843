"""AgentEvents of one prompt turn as ACP session/update payloads (messages, thoughts, tool calls, plans)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import helpers
from acp.schema import Cost, PlanEntry, ToolCallLocation, ToolKind, UsageUpdate

from lsp_agent.acp.streaming import Live, MarkupSplitter, ReplyStream, chunk, visible_text
from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.live_text import is_tagged

OUTPUT_CHARS = 4000  # tool output shown in the editor's tool-call card
MAX_LOCATIONS = 20
# `path:line:` at the start of a search hit
_HIT = re.compile(r"^([\w./@+-][\w./@+ -]*?):(\d+)[:\s]")

KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "get_file_info": "read",
    "list_files": "search",
    "search_text": "search",
    "search_code": "search",
    "find_symbol": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "delete_file": "delete",
    "run_python": "execute",
    "run_command": "execute",
    "run_tests": "execute",
}
HIDDEN_TOOLS = ("task_complete",)  # its summary becomes the agent message instead
_FETCH_WORDS = ("fetch", "http", "url", "web", "download", "browse")
_PLAN_STATUS = {
    "running": "in_progress",
    "completed": "completed",
    "failed": "completed",
    "skipped": "completed",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a tool (MCP tools that reach the web are `fetch`, other unknown tools `other`)."""
    if name in KINDS:
        return KINDS[name]
    if "__" in name and any(word in name.lower() for word in _FETCH_WORDS):
        return "fetch"
    return "other"


def tool_title(name: str, arguments: Any) -> str:
    """A short human title of one tool call ("Read src/a.py:10", "Run `pytest -q`")."""
    args = arguments if isinstance(arguments, dict) else {}
    path = args.get("path")
    if name == "read_file" and path:
        line = args.get("start_line")
        return f"Read {path}" + (f":{line}" if line else "")
    if name in ("write_file", "edit_file") and path:
        return f"Edit {path}"
    if name == "delete_file" and path:
        return f"Delete {path}"
    if name == "get_file_info" and path:
        return f"Inspect {path}"
    if name == "list_files":
        return f"List {path or args.get('pattern') or 'files'}"
    if name in ("search_text", "search_code"):
        return f"Search {args.get('query') or args.get('pattern') or ''!r}".rstrip()
    if name == "find_symbol":
        return f"Find symbol {args.get('name') or args.get('symbol') or ''}".rstrip()
    if name == "run_command":
        argv = args.get("argv")
        text = " ".join(map(str, argv)) if isinstance(argv, list) else str(argv or "")
        return f"Run `{text[:120]}`"
    if name == "run_tests":
        extra = args.get("args")
        return "Run tests" + (f" {' '.join(map(str, extra))}" if isinstance(extra, list) and extra else "")
    if name == "run_python":
        return "Run Python code"
    return name.replace("__", ": ", 1)


def plan_entries(subtasks: list[dict[str, Any]]) -> list[PlanEntry]:
    """ACP plan entries of the planner's subtasks."""
    entries = []
    for task in subtasks:
        status = task.get("status") or "pending"
        text = str(task.get("description") or "")
        if status in ("failed", "skipped"):
            text += f" ({status})"
        entries.append(helpers.plan_entry(text, status=_PLAN_STATUS.get(status, "pending")))
    return entries


@dataclass
class TurnTranslator:
    """Turns the events of one run into session updates; remembers the tool call in flight and the usage.

    Updates come back plain (sent and kept for session/load), as `Live` (sent only: streamed pieces, usage) or as
    `ForHistory` (kept only: a streamed reply, whole).
    """

    root: Path
    turn: str
    current_call: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    answer: str = ""
    extra: dict[str, list[Any]] = field(
        default_factory=dict
    )  # tool call id -> content kept on its result (diffs)
    earlier_cost: float = (
        0.0  # what the session's earlier turns cost (usage_update reports the session's total)
    )
    _counter: int = 0
    _pending_thought: str = ""
    _subtasks: list[dict[str, Any]] = field(default_factory=list)
    _tagged: bool = False  # tools in the prompt: replies are THOUGHT/ACTION markup
    _window: int = 0
    _reply: ReplyStream | None = None  # the reply streaming now
    _streamed: set[int] = field(default_factory=set)  # requests whose text was streamed
    _last_message: str = ""  # the message text the latest streamed reply showed
    _message_open: bool = (
        False  # the client's current message block got text (a new reply starts a paragraph)
    )

    def translate(self, event: AgentEvent) -> list[Any]:
        """The session updates for one event (often none)."""
        handler = getattr(self, f"_on_{event.kind}", None)
        return handler(event.data) if handler is not None else []

    def attach(self, content: Any) -> None:
        """Keep content (an approved edit's diff) on the tool call in flight, shown with its result."""
        if self.current_call is not None:
            self.extra.setdefault(self.current_call, []).append(content)

    def _flush_thought(self) -> list[Any]:
        """The buffered model text as a thought chunk."""
        text, self._pending_thought = self._pending_thought, ""
        return [helpers.update_agent_thought_text(text)] if text.strip() else []

    def _on_start(self, data: dict[str, Any]) -> list[Any]:
        self._tagged = is_tagged(data)
        self._window = int(data.get("contextWindow") or 0)
        return []

    def _on_text_delta(self, data: dict[str, Any]) -> list[Any]:
        request = int(data.get("request") or 0)
        out: list[Any] = []
        if self._reply is None or self._reply.request != request:
            out += self._end_reply()
            self._reply = ReplyStream(request, MarkupSplitter(self._tagged))
        return out + self._show(self._reply.splitter.feed(str(data.get("text") or "")))

    def _show(self, pieces: list[tuple[str, str]]) -> list[Any]:
        """Streamed pieces as live chunks; a reply's first message text starts a new paragraph."""
        out: list[Any] = []
        for channel, text in pieces:
            if channel == "message":
                if self._message_open and self._reply is not None and not self._reply.message:
                    text = "\n\n" + text.lstrip("\n")
                self._message_open = True
            if self._reply is not None:
                self._reply.add(channel, text)
            out.append(Live(chunk(channel, text)))
        return out

    def _end_reply(self) -> list[Any]:
        """Close the streaming reply: what it held back, and the reply whole for session/load."""
        reply = self._reply
        if reply is None:
            return []
        out = self._show(reply.splitter.flush())
        self._reply = None
        self._streamed.add(reply.request)
        self._last_message = reply.message
        return [*out, *reply.history()]

    def _on_thought(self, data: dict[str, Any]) -> list[Any]:
        if data.get("iteration") in self._streamed:
            return self._flush_thought()  # the client saw this reply as it streamed
        # Held back until we know whether it is the final answer (sent once, as the message) or reasoning.
        out = self._flush_thought()
        self._pending_thought = str(data.get("text") or "")
        return out

    def _on_tool_call(self, data: dict[str, Any]) -> list[Any]:
        out = [*self._end_reply(), *self._flush_thought()]
        name = str(data.get("name") or "")
        if name in HIDDEN_TOOLS:
            self.current_call = None
            return out
        self._message_open, self._last_message = False, ""  # the card ends the message block
        self._counter += 1
        self.current_call = f"{self.turn}-{self._counter}"
        args = data.get("arguments")
        locations = self._argument_locations(args) if tool_kind(name) in ("read", "edit", "delete") else []
        start = helpers.start_tool_call(
            self.current_call,
            tool_title(name, args),
            kind=tool_kind(name),
            status="pending",
            locations=locations or None,
            raw_input=args if isinstance(args, dict) else {"arguments": args},
        )
        return [*out, start]

    def _on_tool_result(self, data: dict[str, Any]) -> list[Any]:
        if self.current_call is None or str(data.get("name") or "") in HIDDEN_TOOLS:
            return []
        output = str(data.get("output") or "")
        shown = output if len(output) <= OUTPUT_CHARS else output[:OUTPUT_CHARS] + "\n..."
        content = self.extra.pop(self.current_call, []) if data.get("ok") else []
        if shown:
            content.append(helpers.tool_content(helpers.text_block(shown)))
        update = helpers.update_tool_call(
            self.current_call,
            status="completed" if data.get("ok") else "failed",
            content=content or None,
            locations=self._output_locations(output) or None,
        )
        self.current_call = None
        return [update]

    def _on_tool_output(self, data: dict[str, Any]) -> list[Any]:
        """A running exec tool's output so far (its tail), shown in its card; live only (the result is recorded)."""
        if self.current_call is None:
            return []
        output = str(data.get("output") or "")
        content = [helpers.tool_content(helpers.text_block(output))] if output else None
        return [Live(helpers.update_tool_call(self.current_call, status="in_progress", content=content))]

    def _on_usage(self, data: dict[str, Any]) -> list[Any]:
        """After each model reply: the reply's stream ends; the context used and the session's cost so far."""
        self.usage = dict(data)
        size = int(data.get("contextWindow") or self._window or 0)
        used = int(data.get("contextTokens") or 0)
        cost = Cost(amount=round(self.earlier_cost + float(data.get("cost") or 0.0), 6), currency="USD")
        update = UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost)
        return [*self._end_reply(), Live(update)]

    def _on_plan(self, data: dict[str, Any]) -> list[Any]:
        self._subtasks = [dict(t) for t in data.get("subtasks") or []]
        return [*self._flush_thought(), helpers.update_plan(plan_entries(self._subtasks))]

    def _on_subtask(self, data: dict[str, Any]) -> list[Any]:
        for task in self._subtasks:
            if task.get("id") == data.get("id"):
                task["status"] = data.get("status")
        return [helpers.update_plan(plan_entries(self._subtasks))] if self._subtasks else []

    def _on_error(self, data: dict[str, Any]) -> list[Any]:
        text = f"lsp-agent: {data.get('message')}\n"
        if data.get("kind") == "parse":  # the loop corrects the model itself: reasoning, not news
            return [helpers.update_agent_thought_text(text)]
        # a reply cut off and retried streams again from its start, after this notice
        out = [*self._end_reply(), *self._flush_thought()]
        text = f"\n\n{text}" if self._message_open else text
        self._message_open = True
        return [*out, helpers.update_agent_message_text(text)]

    def _on_done(self, data: dict[str, Any]) -> list[Any]:
        self.answer = str(data.get("answer") or "").strip()
        pending, self._pending_thought = self._pending_thought, ""
        out = self._end_reply()
        if pending.strip() and pending.strip() != self.answer:
            out.append(helpers.update_agent_thought_text(pending))
        shown = visible_text(self.answer, self._tagged)
        if shown and shown not in self._last_message:  # an answer that streamed is not repeated
            out.append(helpers.update_agent_message_text(f"\n\n{shown}" if self._message_open else shown))
        return out

    def _argument_locations(self, args: Any) -> list[ToolCallLocation]:
        """Where a call looks or writes, from its path (and start_line) arguments."""
        if not isinstance(args, dict) or not isinstance(args.get("path"), str) or not args["path"]:
            return []
        line = args.get("start_line") if isinstance(args.get("start_line"), int) else None
        return [ToolCallLocation(path=str(self.root / args["path"]), line=line)]

    def _output_locations(self, output: str) -> list[ToolCallLocation]:
        """The `path:line:` hits of a search output, so the editor can follow along."""
        locations: list[ToolCallLocation] = []
        for text in output.splitlines():
            match = _HIT.match(text)
            if match and (self.root / match.group(1)).is_file():
                locations.append(
                    ToolCallLocation(path=str(self.root / match.group(1)), line=int(match.group(2)))
                )
                if len(locations) >= MAX_LOCATIONS:
                    break
        return locations
