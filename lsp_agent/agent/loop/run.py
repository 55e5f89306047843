"""One agent run: the loop that asks the model and acts on its replies, ending in a RunResult and a Proposal.

Read AgentRun.run, then AgentRun.solve. The rest are collaborators with public interfaces: Conversation (model
requests, usage, compaction, fallbacks), ToolStep (the permission gate and the tools), the run style (ReAct or
CodeAct, agent/loop/styles.py; planned as subtasks by agent/loop/planned.py), the run profile (full or small,
agent/repair/profile.py: the tools, prompts and finish rules for the model's size), and RunEvents, the one channel
every fact goes out on (to the front-end's sink, the transcript and the log). Control flow is by exceptions
(agent/outcome.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.agent import prompts
from lsp_agent.agent.cancellation import Cancellation
from lsp_agent.agent.consent.permissions import PermissionAsker, PermissionGate, SessionPermissions
from lsp_agent.agent.consent.store import PermissionStore
from lsp_agent.agent.conversation.chat import Conversation, Usage, connect_model
from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.summary import fold_conversation
from lsp_agent.agent.conversation.transcript import Transcript
from lsp_agent.agent.events import EventSink, RunEvents
from lsp_agent.agent.loop.planned import run_planned
from lsp_agent.agent.loop.react import ReactStyle
from lsp_agent.agent.loop.results import ProposalCheck, RunResult
from lsp_agent.agent.loop.run_log import RunLog
from lsp_agent.agent.loop.styles import RunStyle
from lsp_agent.agent.loop.tool_step import ToolStep
from lsp_agent.agent.model.budgets import RunBudget
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.agent.outcome import Correction, Outcome, StopRun, TaskFinished
from lsp_agent.agent.repair.profile import RunProfile, choose_profile
from lsp_agent.agent.repair.small_profile import SmallProfile
from lsp_agent.tools.exec_output import EXEC_OUTPUT

if TYPE_CHECKING:
    from lsp_agent.config import Settings
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.tools.registry import ToolRegistry
    from lsp_agent.workspace.overlay import Overlay

log = logging.getLogger(__name__)


class AgentRun:
    """A task run against the workspace; edits stay in the overlay and come back as a Proposal."""

    def __init__(
        self,
        task: str,
        settings: Settings,
        root: Path,
        *,
        sink: EventSink | None = None,
        registry: ToolRegistry | None = None,
        index: WorkspaceIndex | None = None,
        overlay: Overlay | None = None,
        session: Session | None = None,
        permission: PermissionAsker | None = None,
        run_id: str | None = None,
        context: str | None = None,
        model_client: ModelClient | None = None,
        profile: RunProfile | None = None,
    ) -> None:
        from lsp_agent.tools.registry import ToolContext, default_registry
        from lsp_agent.workspace.overlay import Overlay

        self.task, self.settings, self.root = task, settings, Path(root).resolve()
        self.index, self.session, self.context = index, session, context
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.registry = registry if registry is not None else default_registry()
        self.overlay = overlay if overlay is not None else Overlay(self.root)
        self.prompt_extra = ""  # text a front-end adds to the system prompt
        self.repo_map = ""
        self.last_text = ""  # the model's latest words: the answer of a run that stops early
        self.steps_spent = 0  # model requests of max_iterations spent before the loop (spend_step)
        self.cancellation = Cancellation()
        self.usage = Usage()
        self.budget = RunBudget(settings)  # per-run and per-day token and cost limits (model/budgets.py)
        self.transcript = Transcript.of_run(settings, self.root)
        self.events = RunEvents(self.run_id, sink, [self.transcript.record, RunLog()])
        self.ctx = ToolContext(
            root=self.root,
            overlay=self.overlay,
            index=index,
            settings=settings,
            cancel=self.cancellation.flag,
        )
        self.ctx.redact("")  # the run's secrets known now: the log hides them from the first request on
        known = session.permissions if session is not None else SessionPermissions()
        gate = PermissionGate(dict(settings.permissions or {}), permission, known, PermissionStore(self.root))
        self.tools = ToolStep(self.registry, self.ctx, gate, self.events, self.cancellation, self.usage)
        self.style: RunStyle  # chosen, and the conversation opened, when the run starts
        self.conversation: Conversation
        # full or small (agent/repair/profile.py): the one strategy object the loop calls; chosen for the model
        # when the run starts unless given
        self.profile = profile if profile is not None else RunProfile()
        self._profile_given = profile is not None
        self.proposal = ProposalCheck(self.overlay, self.events)
        self._client = model_client

    def _output_listener(self, loop: asyncio.AbstractEventLoop) -> Callable[[str], None]:
        """What exec tools call (from their threads) with a running command's output: a `tool_output` event."""
        return lambda output: loop.call_soon_threadsafe(
            partial(self.events.emit, "tool_output", output=output)
        )

    def cancel(self) -> None:
        """Stop the run: checked between steps; an in-flight model request or tool wait is aborted at once."""
        self.cancellation.cancel()

    @property
    def cancelled(self) -> bool:
        """True once cancel() was called."""
        return self.cancellation.is_set

    async def run(self) -> RunResult:
        """Run the task to its end; never raises for model or tool failures (only CancelledError passes)."""
        self.cancellation.bind(asyncio.get_running_loop())
        if self.events.stream_output:
            self.ctx.extras[EXEC_OUTPUT] = self._output_listener(asyncio.get_running_loop())
        started = time.perf_counter()
        try:
            outcome = await self._solve_task()
        except StopRun as stop:
            error = str(stop) if stop.stop_reason in ("error", "token_budget") else None
            answer = str(stop) if stop.stop_reason == "refusal" else self.last_text  # the provider's words
            outcome = Outcome(stop.stop_reason, answer, False, error)
            if stop.stop_reason == "error":
                self.events.emit("error", message=error)
        except asyncio.CancelledError:
            self.ctx.close()
            self._finish(Outcome("cancelled", self.last_text, False), started)
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must not take down the server
            log.exception("agent run %s failed", self.run_id)
            outcome = Outcome("error", self.last_text, False, f"internal error: {type(exc).__name__}: {exc}")
            self.events.emit("error", message=outcome.error)
        try:
            await self._close_tools()
        except asyncio.CancelledError:
            self._finish(Outcome("cancelled", outcome.answer, False), started)
            raise
        return self._finish(outcome, started)

    async def _solve_task(self) -> Outcome:
        """Get ready, then solve the task in one loop, or planned as subtasks; test a proposal left untested."""
        task_text = await self._prepare()
        if (outcome := await self.profile.before_loop(self)) is not None:
            return outcome
        if self.settings.plan and self.style.plans:
            outcome = await run_planned(self, task_text)
        else:
            outcome = await self.solve(task_text)
        return await self.profile.after_loop(self, outcome)

    async def solve(self, task_text: str) -> Outcome:
        """One loop: ask the model, let the style act on the reply, append what came of it, until it ends."""
        talk, limit = self.conversation, self.settings.max_iterations
        messages = talk.open(task_text)
        schemas = self.style.tool_schemas(self)
        for step in range(self.steps_spent + 1, limit + 1):
            self.check_stop()
            messages = await talk.compact_if_needed(messages)
            reply = await talk.complete(messages, schemas, step=(step, limit))
            talk.append(messages, self.style.assistant_message(reply))
            try:
                observations = await self.style.act(self, reply, messages)
            except Correction as correction:
                talk.append(messages, *correction.messages)
                continue
            except TaskFinished as finished:
                talk.append(messages, *finished.messages)
                return finished.outcome
            talk.append(messages, *observations)
            self._check_budget()
        return Outcome("max_iterations", self.last_text or f"stopped after {limit} iterations", False)

    # --- what the style and the loop use -------------------------------------------------------------------

    def spend_step(self) -> tuple[int, int]:
        """Count a model request made before the loop (the small profile's line repairs) as one of max_iterations;
        returns (step, limit) for its `step` event."""
        self.steps_spent += 1
        return self.steps_spent, self.settings.max_iterations

    def check_stop(self) -> None:
        """Raise StopRun when cancelled or over the token budget."""
        self.cancellation.check()
        self._check_budget()

    def _check_budget(self) -> None:
        """Raise StopRun("token_budget") with which limit hit (tokens or cost, per run or per day)."""
        if reason := self.budget.exceeded(self.usage.total_tokens, self.usage.cost):
            raise StopRun("token_budget", reason)

    def thought(self, text: str) -> None:
        """Report the model's reasoning (kept as the answer of a run that stops early)."""
        self.last_text = text
        self.events.emit("thought", text=text, iteration=self.usage.requests)

    def syntax_report(self) -> str | None:
        """Before finishing: the report on proposed files that no longer parse, once per run (else None)."""
        return self.proposal.syntax_report()

    def task_message(self) -> str:
        """The first user message: session memory, the editor's context (secrets redacted), then the task."""
        session_text = self.ctx.redact(self.session.context_text()) if self.session else ""
        context = self.ctx.redact(self.context) if self.context else self.context
        return prompts.task_message(self.task, context=context, session_text=session_text)

    # --- setup ---------------------------------------------------------------------------------------------

    async def _prepare(self) -> str:
        """Choose the style, connect the model, report the start, write the system prompt; returns the task text."""
        self.style = style_named(self.settings.style)
        repo_map = asyncio.ensure_future(self._repo_map())  # read in a worker thread while the model connects
        try:
            client = self._client or await connect_model(self.settings)
        except BaseException:
            repo_map.cancel()
            raise
        if not self._profile_given:
            self.profile = profile_for(self.settings, client.model)
        self.profile.prepare(self, client)  # tools and limits, before the conversation sees them
        self.conversation = Conversation(
            client,
            self.settings,
            self.events,
            self.cancellation,
            self.usage,
            system_for=lambda mode: self.profile.system_prompt(self, mode),
            tool_schemas=self.style.tool_schemas(self),
        )
        if self.profile.window and not self.settings.context_window:  # small: fits a 16k local server
            self.conversation.compactor.window = min(self.conversation.compactor.window, self.profile.window)
        self.events.emit(
            "start",
            task=self.task,
            model=client.model,
            toolCalling=client.tool_mode,
            style=self.settings.style,
            profile=self.profile.name,
            plan=self.settings.plan,
            root=str(self.root),
            tools=len(self.tools.names()),
            contextWindow=self.conversation.compactor.window,
            maxIterations=self.settings.max_iterations,
        )
        self.repo_map = await repo_map
        self.conversation.write_system_prompt()
        await fold_conversation(self)  # a conversation over its budget: the oldest exchanges become a summary
        return await self.profile.first_message(self, self.task_message())

    async def _repo_map(self) -> str:
        """The index's map of important files, if an index is available."""
        if self.index is None:
            return ""
        try:
            return await asyncio.to_thread(self.index.repo_map, 2000)
        except Exception as exc:  # noqa: BLE001 - the map is a nicety
            log.info("repo map unavailable: %s", exc)
            return ""

    # --- the end -------------------------------------------------------------------------------------------

    async def _close_tools(self) -> None:
        """Release what the tools hold for this run (sandbox processes, scratch copies), off the event loop."""
        if not self.ctx.cleanups:
            return
        try:
            await asyncio.shield(asyncio.to_thread(self.ctx.close))
        except asyncio.CancelledError:
            self.ctx.close()
            raise

    def _finish(self, outcome: Outcome, started: float) -> RunResult:
        """Offer the proposal, emit `done`, remember the exchange, close the transcript."""
        checks: list[str] = []
        try:
            checks = self.proposal.failed_checks(self.profile.tests_failing(self))
            proposal = self.proposal.offer(outcome.answer, checks)
        except Exception as exc:  # noqa: BLE001 - a broken overlay must still end the run
            log.exception("building the proposal failed")
            proposal, checks = None, []
            outcome = Outcome("error", outcome.answer, False, f"could not build the proposal: {exc}")
        self.budget.record(self.usage.total_tokens, self.usage.cost)
        result = RunResult.of(outcome, self.usage, proposal, checks)
        self.events.emit("done", **result.done_data(time.perf_counter() - started))
        if self.session is not None:
            self.session.record_run(self.run_id, self.task, result)
        self.transcript.close()
        return result


def style_named(name: str) -> RunStyle:
    """The run style for settings.style; StopRun("error") names the ones available."""
    if name == "react":
        return ReactStyle()
    if name == "codeact":
        from lsp_agent.agent.loop.codeact import CodeActStyle  # the sandbox's modules load only for CodeAct

        return CodeActStyle()
    raise StopRun(
        "error", f"run style {name!r} is not available in this installation (use 'react' or 'codeact')"
    )


def profile_for(settings: Settings, model: str) -> RunProfile:
    """The profile for the run's model: small (ReAct runs the setting or `auto` picks small for) or full."""
    small = settings.style == "react" and choose_profile(settings, model) == "small"
    return SmallProfile() if small else RunProfile()
