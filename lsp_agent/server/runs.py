"""Agent runs in the background: one asyncio task, progress token and pending proposal per run."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.conversation.diagnostics_context import parse_diagnostics
from lsp_agent.agent.model.budgets import spend_text
from lsp_agent.config import ModelNotConfigured
from lsp_agent.server.alternatives import alternatives_from_event, attach
from lsp_agent.server.ask_choices import (
    choose_root,
    folder_router,
    is_range,
    parse_folder,
    parse_model,
    parse_read_folders,
    read_access,
)
from lsp_agent.server.ask_context import ask_context, follow_up
from lsp_agent.server.live_text import live_text_for
from lsp_agent.server.permissions import EditorPermissionAsker
from lsp_agent.server.progress import ProgressReporter
from lsp_agent.server.proposals import checks_text
from lsp_agent.server.settle import reconcile_applied

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.agent.events import AgentEvent
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

CANCEL_GRACE_SECONDS = 0.8
SETTINGS_WAIT_SECONDS = 10.0
FINISHED_KEPT = 50


@dataclass
class AskRequest:
    """A validated lspAgent.ask argument."""

    task: str
    uri: str | None = None
    range: dict | None = None
    plan: bool | None = None
    session_id: str | None = None
    diagnostics: list[dict] | None = None  # the current file's diagnostics, collected by the client
    follow_up: bool = False  # continue the conversation: it must exist; the last ask's file is the default
    model: str | None = None  # overrides the `model` setting for this ask
    folder: str | None = None  # the workspace folder of an ask without a file (multi-root)
    read_folders: list[str] | None = None  # other workspace folders the run may read (names, URIs or paths)

    def to_dict(self) -> dict[str, Any]:
        """The ask as lspAgent.ask takes it (kept on the exchange, so it can be retried)."""
        out: dict[str, Any] = {"task": self.task}
        for key, value in (("uri", self.uri), ("range", self.range), ("plan", self.plan)):
            if value is not None:
                out[key] = value
        for key, value in (("model", self.model), ("folder", self.folder)):
            if value is not None:
                out[key] = value
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics
        if self.read_folders is not None:
            out["readFolders"] = list(self.read_folders)
        return out


@dataclass
class RunRecord:
    """One run as the server tracks it."""

    run_id: str
    task: str
    root: Path
    session: Session
    state: str = "starting"  # starting | running | done | cancelled | error
    agent: Any = None
    handle: asyncio.Task | None = None
    progress: ProgressReporter | None = None
    started: float = field(default_factory=time.time)
    stop_reason: str | None = None
    error: str | None = None
    cancel_requested: bool = False
    done_sent: bool = False
    spend: str = ""  # the running tokens and cost, shown with each progress report
    folders: Any = None  # workspace.folders.FolderAccess: the other folders this run may read
    live: Any = None  # server.live_text.EditorLiveText: the model's words as they come (None: off)
    checks_failed: list[str] = field(default_factory=list)  # the checks its proposal fails at the end
    alternatives: list = field(default_factory=list)  # other versions of a line that pass (`context` events)

    def to_dict(self) -> dict[str, Any]:
        """The run as lspAgent.status lists it."""
        out = {"runId": self.run_id, "state": self.state, "task": self.task, "sessionId": self.session.id}
        if self.stop_reason:
            out["stopReason"] = self.stop_reason
        if self.error:
            out["error"] = self.error
        return out


def parse_ask(args: Any) -> AskRequest:
    """Validate lspAgent.ask arguments; ValueError names the bad field."""
    if not isinstance(args, dict):
        raise ValueError(
            'lspAgent.ask expects [{"task": "...", "uri"?, "range"?, "plan"?, "sessionId"?, "model"?, "folder"?, "readFolders"?}]'
        )
    task = args.get("task")
    if not isinstance(task, str) or not task.strip():
        if args.get("needsTask"):
            raise ValueError(
                "lspAgent.ask: 'task' is required: this code action expects the editor to prompt for the question "
                "and add it as 'task' before sending the command"
            )
        raise ValueError(
            "lspAgent.ask: 'task' is required (a non-empty string saying what the agent should do)"
        )
    uri, rng, plan, session_id = args.get("uri"), args.get("range"), args.get("plan"), args.get("sessionId")
    if uri is not None and not isinstance(uri, str):
        raise ValueError("lspAgent.ask: 'uri' must be a document URI string")
    if rng is not None and not is_range(rng):
        raise ValueError("lspAgent.ask: 'range' must be {start: {line, character}, end: {line, character}}")
    if plan is not None and not isinstance(plan, bool):
        raise ValueError("lspAgent.ask: 'plan' must be true or false")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ValueError("lspAgent.ask: 'sessionId' must be a non-empty string")
    diagnostics = args.get("diagnostics")
    if diagnostics is not None:
        diagnostics = parse_diagnostics(diagnostics)
    follow_up = args.get("followUp", False)
    if not isinstance(follow_up, bool):
        raise ValueError("lspAgent.ask: 'followUp' must be true or false")
    model, folder = parse_model(args.get("model")), parse_folder(args.get("folder"))
    reads = parse_read_folders(args.get("readFolders"))
    return AskRequest(task.strip(), uri, rng, plan, session_id, diagnostics, follow_up, model, folder, reads)


def json_safe(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of an event payload that serializes as JSON (unknown objects become strings)."""
    return json.loads(json.dumps(data, default=str))


class RunManager:
    """Starts, tracks and cancels runs; forwards their events to the editor."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.runs: dict[str, RunRecord] = {}

    def list(self) -> list[dict[str, Any]]:
        """Every known run, newest last."""
        return [r.to_dict() for r in self.runs.values()]

    def start(self, request: AskRequest) -> RunRecord:
        """Create the run and its background task; returns at once."""
        run_id = uuid.uuid4().hex[:8]
        root = choose_root(self.server, request.uri, request.folder)
        folders = read_access(self.server, root, request.task, request.read_folders)
        session = self.server.conversations.for_ask(request.session_id, root)  # becomes the folder's current
        request = follow_up(session, request)
        reconcile_applied(self.server)  # the new exchange sees what the user applied since the last one
        record = RunRecord(run_id, request.task, root, session)
        record.folders = folders
        session.begin(run_id, request.task, request.to_dict())
        self.runs[run_id] = record
        self._forget_old()
        record.handle = asyncio.get_running_loop().create_task(self._run(record, request))
        return record

    def cancel(self, run_id: str) -> bool:
        """Stop a run within a second: ask the agent to stop, then cancel its task if it lingers."""
        record = self.runs.get(run_id)
        if record is None or record.state not in ("starting", "running"):
            return False
        record.cancel_requested = True
        if record.agent is not None:
            try:
                record.agent.cancel()
            except Exception:
                log.exception("AgentRun.cancel failed")
        handle = record.handle
        if handle is not None and not handle.done():
            asyncio.get_running_loop().call_later(
                CANCEL_GRACE_SECONDS, lambda: handle.cancel() if not handle.done() else None
            )
        return True

    def cancel_all(self) -> None:
        """Cancel every active run (shutdown)."""
        for run_id in list(self.runs):
            self.cancel(run_id)

    def _forget_old(self) -> None:
        """Keep the status list short: drop the oldest finished runs."""
        finished = [r for r in self.runs.values() if r.state in ("done", "cancelled", "error")]
        for record in finished[: max(0, len(finished) - FINISHED_KEPT)]:
            self.runs.pop(record.run_id, None)

    # ----- the run itself ---------------------------------------------------------------------------------

    async def _run(self, record: RunRecord, request: AskRequest) -> None:
        """The background task of one run; never raises (the server stays up whatever happens)."""
        record.progress = ProgressReporter(
            self.server, f"lsp-agent: {_short(record.task, 60)}", f"lsp-agent/run/{record.run_id}"
        )
        await record.progress.begin("starting", on_cancel=lambda: self.cancel(record.run_id))
        try:
            try:  # an ask racing `initialized` waits for the settings (the model may come from the client)
                await asyncio.wait_for(self.server.settings_ready.wait(), SETTINGS_WAIT_SECONDS)
            except TimeoutError:
                pass
            settings = self.server.settings
            if request.plan is not None:
                settings = settings.replace(plan=request.plan)
            if request.model is not None:
                settings = settings.replace(model=request.model)
            settings.require_model("editor")
            record.state = "running"
            if record.cancel_requested:
                raise asyncio.CancelledError
            result = await self._drive(record, request, settings)
            record.stop_reason = result.stop_reason
            record.error = result.error
            if record.cancel_requested or result.stop_reason == "cancelled":
                record.state = "cancelled"
            else:
                record.state = "done" if result.stop_reason != "error" else "error"
            done = {"iterations": result.iterations, "answer": result.answer}
            self._synthesize_done(record, result.stop_reason, **done)  # when the agent sent no `done`
        except ModelNotConfigured as exc:
            self._fail(record, str(exc), show=True)
        except asyncio.CancelledError:
            record.state, record.stop_reason = "cancelled", "cancelled"
            self._synthesize_done(record, "cancelled")
        except Exception as exc:
            log.exception("run %s failed", record.run_id)
            self._fail(record, f"{type(exc).__name__}: {exc}", show=True)
        finally:
            if record.progress is not None:
                record.progress.end(_end_message(record))
            record.agent = None
            record.session.end(record.run_id, record.state, record.error or "")  # a run that never got going

    async def _drive(self, record: RunRecord, request: AskRequest, settings: Any) -> Any:
        """Build the run with the shared assembly (importing the agent core lazily) and run it."""
        # litellm takes seconds to import (never on the event loop); MCP servers start meanwhile (lazily)
        await self.server.attach_plugins()
        mcp = self.server.mcp  # None when the plugins failed to load: the run goes on with the built-in tools
        starting = [mcp.start(settings, record.root)] if mcp is not None else []
        await asyncio.gather(asyncio.to_thread(load_agent_core), *starting)
        from lsp_agent.assembly import build_run
        from lsp_agent.workspace.overlay import Overlay

        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def sink(event: AgentEvent) -> None:
            if threading.get_ident() == loop_thread:
                self._on_event(record, event)
            else:
                loop.call_soon_threadsafe(self._on_event, record, event)

        record.live = live_text_for(self.server, record, settings.live_text_interval)
        index = self.server.indexes.index_for(record.root)
        context = await ask_context(self.server, request, record.root, index, settings, sink, record.folders)
        overlay = Overlay(
            record.root, read_disk=self.server.read_buffer_or_disk, max_file_size=settings.max_file_size
        )
        record.agent = await build_run(
            record.task,
            settings,
            record.root,
            sink=sink,
            asker=EditorPermissionAsker(self.server, record.run_id),
            index=index,
            overlay=overlay,
            session=record.session,
            context=context,
            mcp=mcp.manager if mcp is not None else None,  # EditorMcp.start showed its problems already
            run_id=record.run_id,
            tools=self.server.tool_providers,
            exec_tools=self.server.plugins_error is None,  # no code execution when the sandbox did not load
            folders=folder_router(self.server, record.folders, settings.max_file_size)
            if record.folders
            else None,
            stream_text=record.live is not None,
        )
        if record.cancel_requested:
            record.agent.cancel()
        return await record.agent.run()

    # ----- events -----------------------------------------------------------------------------------------

    def _on_event(self, record: RunRecord, event: AgentEvent) -> None:
        """Forward one event (streamed text throttled); a `proposal` becomes pending before the editor hears `done`."""
        data = event.data if record.live is None else record.live.forward(event.kind, event.data)
        if data is None:
            return
        if event.kind == "proposal":
            self._keep_proposal(record, event)
        elif event.kind == "done":
            self._note_end(record, event.data)
        elif event.kind == "context" and (found := alternatives_from_event(event.data)) is not None:
            record.alternatives.append(found)  # offered on the proposal's line (server/alternatives.py)
        self._send(record, event.kind, data, event.to_text())

    def _note_end(self, record: RunRecord, done: dict[str, Any]) -> None:
        """The run's state from its `done` event; a failure is shown before the editor hears `done`."""
        record.stop_reason, record.error = done.get("stopReason"), done.get("error")
        if record.cancel_requested or record.stop_reason == "cancelled":
            record.state = "cancelled"
        else:
            record.state = "error" if record.stop_reason == "error" else "done"
        if record.state == "error" and record.error:
            self.server.show_error(f"lsp-agent run {record.run_id} failed: {record.error}")
        record.checks_failed = [str(c) for c in done.get("checksFailed") or []]
        if record.checks_failed and record.state == "done":  # the proposal's titles say it too
            self.server.show_warning(
                f"lsp-agent run {record.run_id}: " + checks_text(record.checks_failed, 300)
            )

    def _keep_proposal(self, record: RunRecord, event: AgentEvent) -> None:
        """Hold a run's proposal for the user (hints, code actions, lspAgent.apply)."""
        from lsp_agent.workspace.proposal import Proposal

        proposal = event.detail.get("proposal") or Proposal.from_dict(event.data)
        try:
            attach(self.server.add_pending(record, proposal), record.alternatives)
        except Exception as exc:
            log.exception("run %s: keeping the proposal failed", record.run_id)
            message = f"the proposal of run {record.run_id} could not be kept: {type(exc).__name__}: {exc}"
            self._send(record, "error", {"message": message}, f"error: {message}")

    def _send(self, record: RunRecord, kind: str, data: dict[str, Any], text: str) -> None:
        """Send one event to the editor in all three forms."""
        payload = {"runId": record.run_id, "kind": kind, **json_safe(dict(data))}
        payload["runId"], payload["kind"] = record.run_id, kind
        if kind == "done":
            record.done_sent = True
            if record.progress is not None:  # the progress closes before the editor hears `done`
                record.progress.end(_end_message(record))
        self.server.protocol.notify("lspAgent/event", payload)
        self.server.log_line(f"[run {record.run_id}] {text}")
        if kind == "usage":
            record.spend = spend_text(data)
        if record.progress is not None and kind not in ("usage", "done"):
            record.progress.report(f"{text} | {record.spend}" if record.spend else text)

    def _synthesize_done(self, record: RunRecord, stop_reason: str, **extra: Any) -> None:
        """A `done` event for runs that ended without the agent sending one (never a second one)."""
        if record.done_sent:
            return
        data = {"stopReason": stop_reason, "success": stop_reason == "complete", **extra}
        data["pending"] = self.server.proposals.get(record.run_id) is not None
        self._send(record, "done", data, f"done: {stop_reason}")

    def _fail(self, record: RunRecord, message: str, *, show: bool) -> None:
        """End a run with an error event, a showMessage and a `done`."""
        record.state, record.stop_reason, record.error = "error", "error", message
        self._send(record, "error", {"message": message}, f"error: {message}")
        if show:
            self.server.show_error(message)
        self._synthesize_done(record, "error", error=message)


_agent_loaded = threading.Lock()


def load_agent_core() -> None:
    """Import the agent core and litellm (seconds of work; call from a worker thread)."""
    with _agent_loaded:
        from lsp_agent.agent.loop.run import AgentRun  # noqa: F401
        from lsp_agent.agent.model.client import get_litellm

        get_litellm()


def _short(text: str, limit: int) -> str:
    """One line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _end_message(record: RunRecord) -> str:
    """The progress `end` message."""
    if record.state == "error":
        return f"failed: {_short(record.error or 'error', 150)}"
    if record.state == "cancelled":
        return "cancelled"
    return checks_text(record.checks_failed, 150) or f"finished ({record.stop_reason})"
