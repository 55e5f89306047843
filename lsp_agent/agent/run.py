"""One agent run: the ReAct loop over a model and the tool registry, ending in a RunResult and a Proposal."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent import prompts
from lsp_agent.agent.compaction import Compactor, TokenCounter, render_for_summary
from lsp_agent.agent.events import AgentEvent, EventSink
from lsp_agent.agent.model import ModelClient, ModelError, ModelReply, context_window, get_litellm
from lsp_agent.agent.outcome import _Outcome, _Stop
from lsp_agent.agent.parsing import ToolCall, parse_reply
from lsp_agent.agent.permission_store import PermissionStore
from lsp_agent.agent.permissions import PermissionAsker, PermissionGate, SessionPermissions, denial_message
from lsp_agent.agent.planned import run_planned
from lsp_agent.agent.profile import prepare_run
from lsp_agent.agent.session import Session
from lsp_agent.agent.transcript import Transcript
from lsp_agent.workspace.proposal import check_syntax

if TYPE_CHECKING:
    from lsp_agent.config import Settings
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.tools.registry import ToolContext, ToolRegistry, ToolResult
    from lsp_agent.workspace.overlay import Overlay
    from lsp_agent.workspace.proposal import Proposal

log = logging.getLogger(__name__)

FINISH_TOOL = "task_complete"
EVENT_OUTPUT_CHARS = 4000

# Style name -> setup(run) called before the loop (e.g. codeact registers its tools and prompt text).
STYLE_SETUPS: dict[str, Callable[[AgentRun], None]] = {}


def register_style(name: str, setup: Callable[[AgentRun], None]) -> None:
    """Make `settings.style == name` available; setup may change run.registry and run.prompt_extra."""
    STYLE_SETUPS[name] = setup


def _setup_codeact(run: AgentRun) -> None:
    """The CodeAct style lives with the sandbox and is imported only when used."""
    from lsp_agent.sandbox.codeact import setup_codeact

    setup_codeact(run)


register_style("codeact", _setup_codeact)


@dataclass
class RunResult:
    """How a run ended."""

    success: bool
    answer: str
    stop_reason: str  # complete | no_tool_call | max_iterations | token_budget | cancelled | error
    iterations: int
    messages: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    proposal: Proposal | None
    error: str | None = None

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


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
    ) -> None:
        self.task = task
        self.settings = settings
        self.root = Path(root).resolve()
        self.sink = sink
        self.index = index
        self.session = session
        self.context = context
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.gate = PermissionGate(
            dict(settings.permissions or {}),
            permission,
            session.permissions if session is not None else SessionPermissions(),
            PermissionStore(self.root),
        )
        self.prompt_extra = ""
        self.style_loop: Callable[[AgentRun, str], Any] | None = None  # a style's own loop (codeact)
        if registry is None:
            from lsp_agent.tools.registry import default_registry

            registry = default_registry()
        self.registry = registry
        if overlay is None:
            from lsp_agent.workspace.overlay import Overlay

            overlay = Overlay(self.root)
        self.overlay = overlay
        self._client = model_client
        self._cancel = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: asyncio.Future[Any] | None = None
        self._lock = threading.Lock()
        self.iterations = 0
        self.message_count = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = 0.0
        self._syntax_reported = False
        self._failures: dict[str, int] = {}
        self._last_text = ""
        self.transcript = Transcript(settings.transcript)

    # --- public ---------------------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the run: checked between steps; an in-flight model request or tool wait is aborted at once."""
        self._cancel.set()
        with self._lock:
            loop, task = self._loop, self._inflight
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    @property
    def cancelled(self) -> bool:
        """True once cancel() was called."""
        return self._cancel.is_set()

    async def run(self) -> RunResult:
        """Run the task to its end; never raises for model or tool failures."""
        self._loop = asyncio.get_running_loop()
        started = time.perf_counter()
        outcome: _Outcome
        try:
            outcome = await self._run()
        except _Stop as stop:
            outcome = _Outcome(
                stop.stop_reason, self._last_text, False, str(stop) if stop.stop_reason == "error" else None
            )
            if stop.stop_reason == "error":
                self._emit("error", message=str(stop))
        except asyncio.CancelledError:
            self._close_tools_now()
            self._finish(_Outcome("cancelled", self._last_text, False), started)
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must not take down the server
            log.exception("agent run %s failed", self.run_id)
            outcome = _Outcome(
                "error", self._last_text, False, f"internal error: {type(exc).__name__}: {exc}"
            )
            self._emit("error", message=outcome.error)
        try:
            await self._close_tools()
        except asyncio.CancelledError:
            self._finish(_Outcome("cancelled", outcome.answer, False), started)
            raise
        return self._finish(outcome, started)

    async def _close_tools(self) -> None:
        """Release what the tools hold for this run (sandbox processes, scratch copies), off the event loop."""
        ctx = getattr(self, "ctx", None)
        if ctx is None or not ctx.cleanups:
            return
        try:
            await asyncio.shield(asyncio.to_thread(ctx.close))
        except asyncio.CancelledError:
            self._close_tools_now()
            raise

    def _close_tools_now(self) -> None:
        """_close_tools on the calling thread (when the run itself is being cancelled)."""
        ctx = getattr(self, "ctx", None)
        if ctx is not None:
            ctx.close()

    # --- setup ----------------------------------------------------------------------------------------------

    async def _run(self) -> _Outcome:
        """Prepare the model and tools, then run the task (planned or not)."""
        if self.settings.style != "react":
            setup = STYLE_SETUPS.get(self.settings.style)
            if setup is None:
                raise _Stop(
                    "error", f"run style {self.settings.style!r} is not available in this installation"
                )
            setup(self)
        if self._client is None:
            try:
                self.settings.require_model()
                await asyncio.to_thread(get_litellm)  # a first import takes seconds: keep the event loop free
                self._client = ModelClient(self.settings)
            except Exception as exc:  # ModelNotConfigured and friends
                raise _Stop("error", str(exc)) from None
        client = self._client
        client.on_retry = self._on_retry
        self._emit(
            "start",
            task=self.task,
            model=client.model,
            toolCalling=client.tool_mode,
            style=self.settings.style,
            plan=self.settings.plan,
            root=str(self.root),
        )
        self.transcript.write(
            "start", run_id=self.run_id, task=self.task, model=client.model, mode=client.tool_mode
        )
        from lsp_agent.tools.registry import ToolContext

        self.ctx: ToolContext = ToolContext(
            root=self.root,
            overlay=self.overlay,
            index=self.index,
            settings=self.settings,
            cancel=self._cancel,
        )
        counter = TokenCounter(client.model)
        summarizer = self._summarize if self.settings.compaction_summary else None
        self.compactor = Compactor(
            counter,
            context_window(client.model, self.settings.context_window),
            self.settings.compaction_threshold,
            summarizer=summarizer,
        )
        if client.tool_mode == "native":
            self.compactor.reserved = counter.text_tokens(json.dumps(self.registry.schemas()))
        self._repo_map_text = await self._repo_map()
        self.system = prompts.system_prompt(
            mode=client.tool_mode,
            schemas=self.registry.schemas(),
            root_name=self.root.name,
            repo_map=self._repo_map_text,
            extra=self.prompt_extra,
        )
        session_text = self.session.context_text() if self.session else ""
        context = self.ctx.redact(self.context) if self.context else self.context  # a selection in .env
        task_text = prompts.task_message(self.task, context=context, session_text=session_text)
        self.system, task_text = await prepare_run(self, task_text)  # profile, tools, context up front
        log.info(
            "run %s: model %s, %s tool calling, %d tools, context window %d, iteration limit %d",
            self.run_id,
            client.model,
            client.tool_mode,
            len(self.registry.names()),
            self.compactor.window,
            self.settings.max_iterations,
        )
        log.debug("system prompt:\n%s", self.system)
        log.debug("task message:\n%s", task_text)
        if self.style_loop is not None:
            return await self.style_loop(self, task_text)
        if self.settings.plan:
            return await run_planned(self, task_text)
        return await self._react(task_text, self.settings.max_iterations)

    async def _repo_map(self) -> str:
        """The index's map of important files, if an index is available."""
        if self.index is None:
            return ""
        try:
            return await asyncio.to_thread(self.index.repo_map, 2000)
        except Exception as exc:  # noqa: BLE001 - the map is a nicety
            log.info("repo map unavailable: %s", exc)
            return ""

    # --- the loop -------------------------------------------------------------------------------------------

    async def _react(self, task_text: str, max_iterations: int) -> _Outcome:
        """Reason, act, observe until the task is complete or a limit is reached."""
        client = self._client
        assert client is not None
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": task_text},
        ]
        self.message_count += 2
        schemas = self.registry.schemas()
        empty_nudged = False
        for step in range(1, max_iterations + 1):
            self._check_stop()
            log.info(
                "run %s: iteration %d of %d, %d messages", self.run_id, step, max_iterations, len(messages)
            )
            messages = await self._maybe_compact(messages)
            reply = await self._complete(messages, schemas)
            messages.append(reply.message)
            self.message_count += 1
            calls, thought, problem, final = self._interpret(reply)
            if thought:
                self._last_text = thought
                self._emit("thought", text=thought, iteration=self.iterations)
            if problem is not None:
                correction = prompts.format_correction(problem, client.tool_mode, self.registry.names())
                self._emit("error", message=f"could not parse the model's tool call: {problem}", kind="parse")
                self._observe(messages, None, correction, native=False)
                continue
            if not calls:
                answer = final if final is not None else reply.content.strip()
                if not answer and not empty_nudged:
                    empty_nudged = True
                    self._observe(messages, None, prompts.EMPTY_REPLY, native=False)
                    continue
                if self._report_syntax_once(messages, None):
                    continue
                return _Outcome("no_tool_call", answer, True)
            native = client.tool_mode == "native" and bool(reply.tool_calls)
            finished: str | None = None
            for call in calls:
                result = await self._execute(call)
                output = self._with_repeat_hint(call, result.ok, result.output)
                if result.ok and self._is_finish(call.name):
                    if self._report_syntax_once(messages, call if native else None):
                        continue
                    finished = _summary_of(call, output)
                    output = "Task marked complete."
                self._observe(
                    messages, call if native else None, prompts.observation(call.name, output), native
                )
            if finished is not None:
                return _Outcome("complete", finished, True)
            if self._over_budget():
                raise _Stop("token_budget", f"token budget of {self.settings.token_budget} reached")
            log.debug("step %d of %d done", step, max_iterations)
        log.warning("run %s: reached the iteration limit of %d", self.run_id, max_iterations)
        return _Outcome(
            "max_iterations", self._last_text or f"stopped after {max_iterations} iterations", False
        )

    def _with_repeat_hint(self, call: ToolCall, ok: bool, output: str) -> str:
        """The output, plus a nudge when the very same call failed the same way before."""
        if ok:
            self._failures.clear()
            return output
        key = f"{call.name}\0{json.dumps(call.arguments, sort_keys=True, default=str)}\0{output}"
        self._failures[key] = self._failures.get(key, 0) + 1
        times = self._failures[key]
        if times < 2:
            return output
        return (
            f"{output}\n[This exact call has now failed {times} times with the same error. Do not repeat it: "
            "read the error, look at the file or workspace again, and try a different approach.]"
        )

    def _interpret(self, reply: ModelReply) -> tuple[list[ToolCall], str, str | None, str | None]:
        """(calls, thought, parse problem or None, final answer or None) for a reply in the current mode."""
        assert self._client is not None
        if self._client.tool_mode == "native":
            if reply.tool_calls:
                return reply.tool_calls, reply.content.strip(), None, None
            # Some native models still write tool calls as text; accept the tagged forms.
            parsed = parse_reply(reply.content, tags_only=True)
            if parsed.calls or parsed.error:
                return parsed.calls, parsed.thought, parsed.error, None
            return [], "", None, reply.content.strip()
        parsed = parse_reply(reply.content)
        if parsed.error is None and not parsed.calls and parsed.final is not None:
            return [], parsed.thought if parsed.thought != parsed.final else "", None, parsed.final
        return parsed.calls, parsed.thought, parsed.error, parsed.final

    def _observe(
        self, messages: list[dict[str, Any]], call: ToolCall | None, text: str, native: bool
    ) -> None:
        """Append a tool result (native: a tool message for the call id; prompt: a user message)."""
        if native and call is not None:
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text})
        else:
            messages.append({"role": "user", "content": text})
        self.message_count += 1

    def _is_finish(self, name: str) -> bool:
        """True for the task_complete tool (also under decorated names)."""
        resolve = getattr(self.registry, "resolve_name", None)
        tool = resolve(name) if resolve else self.registry.get(name)
        return tool is not None and tool.name == FINISH_TOOL

    def _report_syntax_once(self, messages: list[dict[str, Any]], call: ToolCall | None) -> bool:
        """Before finishing: tell the model once about Python files in the proposal that do not parse."""
        if self._syntax_reported:
            return False
        problems = check_syntax(self.overlay)
        if not problems:
            return False
        self._syntax_reported = True
        report = prompts.syntax_error_report(problems)
        self._emit(
            "error", message="proposal has Python syntax errors: " + "; ".join(problems), kind="syntax"
        )
        self._observe(messages, call, report, native=call is not None)
        return True

    # --- model ----------------------------------------------------------------------------------------------

    async def _complete(
        self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]] | None
    ) -> ModelReply:
        """One model request with usage accounting; a context overflow triggers one forced compaction."""
        client = self._client
        assert client is not None
        self.transcript.request(client.model, messages, [s["function"]["name"] for s in schemas or []])
        log.info("run %s: model request %d (%d messages)", self.run_id, self.iterations + 1, len(messages))
        if log.isEnabledFor(logging.DEBUG):
            log.debug("request messages (last two): %s", messages[-2:])
        try:
            reply = await self._guard(client.complete(messages, schemas))
        except ModelError as exc:
            if exc.kind == "tools_unsupported" and not any(m.get("role") == "tool" for m in messages):
                return await self._retry_with_prompt_tools(messages, schemas, str(exc))
            if exc.kind != "context" or len(messages) <= 3:
                self.transcript.write("model_error", message=str(exc), kind=exc.kind)
                raise _Stop("error", str(exc)) from None
            compacted, report = await self.compactor.compact(messages, force=True)
            self._emit_compaction(report)
            messages[:] = compacted
            self.transcript.reset()
            try:
                reply = await self._guard(client.complete(messages, schemas))
            except ModelError as again:
                raise _Stop("error", str(again)) from None
        self._account(reply)
        log.debug(
            "reply in %.3fs (%d attempts): %r tool_calls=%s",
            reply.seconds,
            reply.attempts,
            reply.content,
            reply.message.get("tool_calls"),
        )
        self.transcript.write(
            "reply",
            content=reply.content,
            tool_calls=reply.message.get("tool_calls"),
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost=reply.cost,
            seconds=round(reply.seconds, 4),
            attempts=reply.attempts,
            usage_estimated=reply.usage_estimated,
        )
        return reply

    async def _retry_with_prompt_tools(
        self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]] | None, why: str
    ) -> ModelReply:
        """The provider refused native tools: describe them in the system prompt instead and ask again."""
        assert self._client is not None
        self._emit("error", message=why, kind="tools_unsupported")
        self.compactor.reserved = 0  # the tools now travel in the system prompt, which is counted
        self.system = prompts.system_prompt(
            mode="prompt",
            schemas=self.registry.schemas(),
            root_name=self.root.name,
            repo_map=self._repo_map_text,
            extra=self.prompt_extra,
        )
        if messages and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": self.system}
        self.transcript.reset()
        return await self._complete(messages, schemas)

    def _account(self, reply: ModelReply) -> None:
        """Add a reply's usage to the run totals and report it."""
        self.iterations += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cost += reply.cost
        self._emit(
            "usage",
            iteration=self.iterations,
            promptTokens=self.prompt_tokens,
            completionTokens=self.completion_tokens,
            totalTokens=self.prompt_tokens + self.completion_tokens,
            cost=self.cost,
            estimated=reply.usage_estimated,
        )

    async def _guard(self, awaitable: Any) -> Any:
        """Await a model request or tool call so that cancel() can abort it."""
        task = asyncio.ensure_future(awaitable)
        with self._lock:
            self._inflight = task
        if self._cancel.is_set():
            task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            if self._cancel.is_set():
                raise _Stop("cancelled", "the run was cancelled") from None
            raise
        finally:
            with self._lock:
                self._inflight = None

    def _check_stop(self) -> None:
        """Raise _Stop when cancelled or over the token budget."""
        if self._cancel.is_set():
            raise _Stop("cancelled", "the run was cancelled")
        if self._over_budget():
            raise _Stop("token_budget", f"token budget of {self.settings.token_budget} reached")

    def _over_budget(self) -> bool:
        """True when the run used its token budget."""
        budget = self.settings.token_budget
        return bool(budget) and self.prompt_tokens + self.completion_tokens >= budget

    def _on_retry(self, attempt: int, delay: float, message: str) -> None:
        """Report a transient model failure that will be retried."""
        self._emit(
            "error",
            message=f"{message} (retry {attempt} in {delay:.1f}s)",
            kind="transient",
            retrying=True,
            reason=message,
            attempt=attempt,
            delay=round(delay, 3),
        )
        self.transcript.write("retry", attempt=attempt, delay=delay, message=message)

    # --- compaction -----------------------------------------------------------------------------------------

    async def _maybe_compact(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Compact the conversation when it passed the threshold."""
        if not self.compactor.needs(messages):
            return messages
        compacted, report = await self.compactor.compact(messages)
        self._emit_compaction(report)
        self.transcript.reset()
        return compacted

    def _emit_compaction(self, report: Any) -> None:
        """Report a compaction."""
        data = {
            "before": report.before,
            "after": report.after,
            "removed": report.removed,
            "truncated": report.truncated,
            "summarized": report.summarized,
            "window": self.compactor.window,
        }
        self._emit("compaction", **data)
        self.transcript.write("compaction", **data)

    async def _summarize(self, middle: list[dict[str, Any]]) -> str:
        """A model-written summary of messages removed by compaction."""
        request = [
            {"role": "user", "content": prompts.compaction_summary_request(render_for_summary(middle))}
        ]
        reply = await self._complete(request, None)
        return reply.content

    # --- tools ----------------------------------------------------------------------------------------------

    async def _execute(self, call: ToolCall) -> ToolResult:
        """Run one tool call through the permission gate and the registry."""
        from lsp_agent.tools.registry import ToolResult

        if self._cancel.is_set():
            raise _Stop("cancelled", "the run was cancelled")
        self._emit(
            "tool_call", id=call.id, name=call.name, arguments=call.arguments, iteration=self.iterations
        )
        if call.problem is not None:
            result = ToolResult(False, f"Error: {call.problem}.", 0.0)
            self._after_tool(call, result)
            return result
        resolve = getattr(self.registry, "resolve_name", None)
        tool = resolve(call.name) if resolve else self.registry.get(call.name)
        if tool is not None and tool.permission != "none":
            args = call.arguments if isinstance(call.arguments, dict) else {}
            decision = await self._guard(self.gate.check(tool.name, tool.permission, args))
            self._emit(
                "permission",
                tool=tool.name,
                decision="allowed" if decision.allowed else "denied",
                source=decision.source,
                answer=decision.answer,
                reason=tool.permission,
            )
            if not decision.allowed:
                result = ToolResult(False, denial_message(tool.name, tool.permission, decision), 0.0)
                self._after_tool(call, result)
                return result
        result = await self._guard(self.registry.execute(call.name, call.arguments, self.ctx))
        self._after_tool(call, result)
        return result

    def _after_tool(self, call: ToolCall, result: ToolResult) -> None:
        """Report a tool result."""
        output = result.output
        shown = output if len(output) <= EVENT_OUTPUT_CHARS else output[:EVENT_OUTPUT_CHARS] + "\n..."
        self._emit(
            "tool_result", id=call.id, name=call.name, ok=result.ok, output=shown, seconds=result.seconds
        )
        self.transcript.write(
            "tool",
            name=call.name,
            arguments=call.arguments,
            ok=result.ok,
            output=output,
            seconds=round(result.seconds, 4),
        )
        log.info(
            "tool %s(%s) %s in %.3fs",
            call.name,
            call.arguments,
            "ok" if result.ok else "failed",
            result.seconds,
        )
        log.debug("tool output: %s", output)

    # --- results --------------------------------------------------------------------------------------------

    def _finish(self, outcome: _Outcome, started: float) -> RunResult:
        """Build the RunResult, emit the proposal and done events, remember the exchange, close the transcript."""
        proposal = None
        try:
            candidate = self.overlay.to_proposal(summary=outcome.answer)
            if not candidate.is_empty():
                proposal = candidate
                self._emit("proposal", **candidate.to_dict(), syntaxErrors=check_syntax(candidate))
        except Exception as exc:  # noqa: BLE001 - a broken overlay must still end the run
            log.exception("building the proposal failed")
            outcome = _Outcome("error", outcome.answer, False, f"could not build the proposal: {exc}")
        result = RunResult(
            success=outcome.success,
            answer=outcome.answer,
            stop_reason=outcome.stop_reason,
            iterations=self.iterations,
            messages=self.message_count,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost=self.cost,
            proposal=proposal,
            error=outcome.error,
        )
        self._emit(
            "done",
            success=result.success,
            stopReason=result.stop_reason,
            answer=result.answer,
            iterations=result.iterations,
            messages=result.messages,
            promptTokens=result.prompt_tokens,
            completionTokens=result.completion_tokens,
            cost=result.cost,
            error=result.error,
            seconds=round(time.perf_counter() - started, 3),
        )
        if self.session is not None:
            self.session.record(_exchange_summary(self.run_id, self.task, result))
        self.transcript.write(
            "done",
            success=result.success,
            stop_reason=result.stop_reason,
            answer=result.answer,
            iterations=result.iterations,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cost=result.cost,
            error=result.error,
        )
        self.transcript.close()
        return result

    def _emit(self, kind: str, /, **data: Any) -> None:
        """Send an event to the sink; a failing sink is logged, never fatal."""
        if self.sink is None:
            return
        try:
            self.sink(AgentEvent(kind, self.run_id, data))
        except Exception:  # noqa: BLE001 - the sink belongs to the caller
            log.exception("event sink failed on %s", kind)


def _summary_of(call: ToolCall, output: str) -> str:
    """The final answer carried by a task_complete call."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return output.strip() or str(arguments.get("summary") or "").strip()


def _exchange_summary(run_id: str, task: str, result: RunResult) -> str:
    """One line for session memory."""
    changed = ", ".join(result.proposal.paths()) if result.proposal is not None else "none"
    answer = " ".join(result.answer.split())[:300]
    return f"run {run_id}: task {task.strip()[:200]!r} ended {result.stop_reason}; answer: {answer}; proposed changes: {changed}"
