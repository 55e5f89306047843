"""One session/prompt: the prompt's blocks as a task and context, the run, its updates, and its stop reason."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from acp import RequestError, helpers
from acp.schema import PromptResponse, Usage

from lsp_agent.acp.files import ClientFiles, ConsentOverlay, rejection_message, write_change
from lsp_agent.acp.permissions import ToolAsker
from lsp_agent.acp.streaming import ForHistory, Live
from lsp_agent.acp.updates import TurnTranslator
from lsp_agent.agent.events import AgentEvent

if TYPE_CHECKING:
    from collections.abc import Callable

    from lsp_agent.acp.sessions import AcpSession
    from lsp_agent.agent.loop.run import RunResult
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

CONTEXT_FILE_CHARS = 60_000  # text of one referenced file put into the context
STOP_REASONS = {
    "complete": "end_turn",
    "no_tool_call": "end_turn",
    "max_iterations": "max_turn_requests",
    "token_budget": "max_tokens",
    "refusal": "refusal",
    "cancelled": "cancelled",
}
ASK_MODE_NOTE = "This session is in Ask mode: answer from reading and searching the code; do not edit files."


@dataclass
class PromptInput:
    """What a prompt asks for: the typed text and the context its resources carry."""

    text: str
    context: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # file paths of resource links still to be read


def parse_prompt(blocks: list[Any]) -> PromptInput:
    """Text blocks become the task; embedded resources and resource links become context."""
    parsed = PromptInput("")
    texts = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            if getattr(resource, "text", None) is not None:
                parsed.context.append(_fenced(_label(resource.uri), resource.text))
            else:
                parsed.context.append(f"(attached binary resource {resource.uri} is not shown)")
        elif kind == "resource_link":
            path = _file_path(block.uri)
            if path is not None:
                parsed.links.append(path)
            else:
                parsed.context.append(f"Referenced: {block.name} <{block.uri}>")
        else:
            parsed.context.append(f"(a {kind} block was attached; this agent reads text only)")
    parsed.text = "\n".join(texts).strip()
    return parsed


async def read_links(parsed: PromptInput, root: Path, files: ClientFiles) -> None:
    """Put the text of linked files into the context (through the client, so unsaved text wins)."""
    for path in parsed.links:
        try:
            text = await asyncio.to_thread(files.read, Path(path))
        except Exception as exc:  # noqa: BLE001 - a bad link is mentioned, not fatal
            parsed.context.append(f"Referenced file {path} could not be read: {exc}")
            continue
        if text is None:
            parsed.context.append(f"Referenced file {path} does not exist")
            continue
        if len(text) > CONTEXT_FILE_CHARS:
            text = text[:CONTEXT_FILE_CHARS] + "\n... (cut; read the rest with read_file)"
        parsed.context.append(_fenced(_relative(path, root), text))


@dataclass
class UpdatePump:
    """Sends a turn's session updates in order (events arrive synchronously; sending is async) and records them."""

    conn: Any
    session: AcpSession
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)
    task: asyncio.Task | None = None

    def start(self) -> UpdatePump:
        """Begin sending."""
        self.task = asyncio.ensure_future(self._send_all())
        return self

    def put(self, update: Any, *, record: bool = True) -> None:
        """Queue one update (recorded for session/load unless told otherwise)."""
        if record:
            self.session.record(update)
        self.queue.put_nowait(update)

    async def drain(self) -> None:
        """Wait until everything queued was sent."""
        self.queue.put_nowait(None)
        if self.task is not None:
            await self.task

    async def _send_all(self) -> None:
        """Send queued updates in order until the end marker."""
        while (update := await self.queue.get()) is not None:
            try:
                await self.conn.session_update(session_id=self.session.id, update=update)
            except Exception as exc:  # noqa: BLE001 - a lost notification must not end the turn
                log.warning("session/update failed: %s", exc)


async def run_turn(
    conn: Any,
    session: AcpSession,
    blocks: list[Any],
    settings: Settings,
    files: ClientFiles,
    index: Any,
    folders: Callable[[str], Any] | None = None,
) -> PromptResponse:
    """Run the agent on one prompt and answer with the truthful stop reason (`folders(task)`: its read folders)."""
    from lsp_agent.assembly import build_run

    parsed = parse_prompt(blocks)
    await read_links(parsed, session.root, files)
    session.turns += 1
    translator = TurnTranslator(session.root, f"{session.id}-{session.turns}", earlier_cost=session.cost)
    pump = UpdatePump(conn, session).start()
    for block in blocks:  # the user's own message, for session/load
        session.record(helpers.update_user_message(block))
    sink = _sink_for(session, translator, pump)
    overlay, asker = _consent_for(session, settings, files, translator)
    read_only = session.mode == "ask"
    context = "\n\n".join([*([ASK_MODE_NOTE] if read_only else []), *parsed.context]) or None
    try:
        run = await build_run(
            parsed.text or "(no text: see the attached context)",
            settings,
            session.root,
            sink=sink,
            asker=asker,
            index=index,
            overlay=overlay,
            session=session.memory,
            context=context,
            mcp=session.mcp,
            folders=folders(parsed.text) if folders is not None else None,
            stream_text=True,
            read_only=read_only,
        )
        run.events.stream_output = True  # exec output into the tool call card while the command runs
        session.run, overlay.run_id = run, run.run_id
        session.turn = asyncio.ensure_future(run.run())
        result: RunResult | None = await session.turn
    except asyncio.CancelledError:
        if not session.cancel_requested:
            raise
        result = None
    finally:
        session.run, session.turn = None, None
        session.cost += float(translator.usage.get("cost") or 0.0)
    # A cancelled turn writes nothing more (its proposal may hold an edit whose question was withdrawn).
    if result is not None and result.checks_failed and not session.cancel_requested:
        pump.put(helpers.update_agent_message_text(checks_message(result.checks_failed)))
    leftovers = result is not None and result.proposal is not None and not result.proposal.is_empty()
    if leftovers and not session.cancel_requested:
        await settle_leftovers(session, result, files, pump, overlay.run_id)
    await pump.drain()
    return _response(session, result, translator)


def _sink_for(
    session: AcpSession, translator: TurnTranslator, pump: UpdatePump
) -> Callable[[AgentEvent], None]:
    """The run's event sink: live updates streamed, history-only ones recorded, the rest streamed and recorded."""

    def sink(event: AgentEvent) -> None:
        for update in translator.translate(event):
            if isinstance(update, Live):
                pump.put(update.update, record=False)
            elif isinstance(update, ForHistory):
                session.record(update.update)
            else:
                pump.put(update)

    return sink


def _consent_for(
    session: AcpSession, settings: Settings, files: ClientFiles, translator: TurnTranslator
) -> tuple[ConsentOverlay, ToolAsker]:
    """The overlay that asks before each write and the asker for exec and MCP tools, for one turn."""
    read_only = lambda: session.mode == "ask"  # noqa: E731
    session.edits.current_call = lambda: translator.current_call
    session.edits.on_approved = translator.attach
    session.edits.settings_rules = dict(settings.permissions or {})
    overlay = ConsentOverlay(
        session.root, files, session.edits.decide, max_file_size=settings.max_file_size, read_only=read_only
    )
    return overlay, ToolAsker(session.requests, lambda: translator.current_call, read_only)


async def settle_leftovers(
    session: AcpSession, result: RunResult, files: ClientFiles, pump: UpdatePump, run_id: str = ""
) -> None:
    """Ask about changes the run left in its proposal (made where asking mid-run was impossible)."""
    assert result.proposal is not None
    for change in result.proposal.changes:
        allowed, how = await session.edits.decide(change)
        error = (
            await asyncio.to_thread(write_change, session.root, change, files, run_id) if allowed else None
        )
        note = rejection_message(change.path, how) if not allowed else error or f"{change.path}: written."
        pump.put(helpers.update_agent_message_text(f"\n{note}\n"))


def _response(session: AcpSession, result: RunResult | None, translator: TurnTranslator) -> PromptResponse:
    """The prompt's answer: cancelled when asked to cancel; errors become JSON-RPC errors."""
    usage = translator.usage
    tokens = Usage(
        input_tokens=int(usage.get("promptTokens") or 0),
        output_tokens=int(usage.get("completionTokens") or 0),
        total_tokens=int(usage.get("totalTokens") or 0),
    )
    if session.cancel_requested or result is None:
        return PromptResponse(stop_reason="cancelled", usage=tokens)
    if result.stop_reason == "error":
        raise RequestError(-32603, result.error or "the agent run failed", {"stopReason": "error"})
    if result.finish_reason == "content_filter":  # the provider refused, whatever the run made of it
        return PromptResponse(stop_reason="refusal", usage=tokens)
    meta = {"lspAgent": {"status": result.status, "checksFailed": list(result.checks_failed)}}
    return PromptResponse(
        stop_reason=STOP_REASONS.get(result.stop_reason, "end_turn"), usage=tokens, _meta=meta
    )


def checks_message(failed: list[str]) -> str:
    """The turn's last words when its changes fail the run's own checks (ACP has no stop reason for that)."""
    listing = "\n".join(f"- {check}" for check in failed)
    return f"\n\n**Checks failed**: the changes fail the agent's own checks:\n{listing}\n"


def _file_path(uri: str) -> str | None:
    """The local path of a file:// URI (or of a plain absolute path), else None."""
    if uri.startswith("/"):
        return uri
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else None


def _label(uri: str) -> str:
    """A short name for a resource in the context."""
    return _file_path(uri) or uri


def _relative(path: str, root: Path) -> str:
    """`path` relative to the root where it lies inside it."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _fenced(name: str, text: str) -> str:
    """A named fenced block of context."""
    return f"Attached {name}:\n```\n{text}\n```"
