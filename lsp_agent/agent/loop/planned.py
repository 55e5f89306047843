"""Planning mode: a JSON plan of subtasks, run in dependency order (each sees earlier results), then a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_agent.agent import prompts
from lsp_agent.agent.loop.planner import Plan, SubTask, parse_plan
from lsp_agent.agent.outcome import Outcome, StopRun

if TYPE_CHECKING:
    from lsp_agent.agent.loop.styles import RunHost


async def run_planned(run: RunHost, task_text: str) -> Outcome:
    """Plan subtasks, run them in dependency order (each sees earlier results), then summarize."""
    plan = await _make_plan(run, task_text)
    run.events.emit("plan", subtasks=[t.to_dict() for t in plan.subtasks], fallback=plan.fallback)
    if plan.fallback:
        return await run.solve(task_text)
    done: list[tuple[str, str]] = []
    by_id = {t.id: t for t in plan.subtasks}
    total = len(plan.subtasks)
    for n, sub in enumerate(plan.subtasks, 1):
        blocked = [d for d in sub.dependencies if by_id[d].status != "completed"]
        if blocked:
            _set_status(run, sub, "skipped", f"skipped: depends on unfinished subtask(s) {blocked}")
            continue
        _set_status(run, sub, "running")
        try:
            outcome = await run.solve(prompts.subtask_message(task_text, n, total, sub.description, done))
        except StopRun as stop:
            _set_status(run, sub, "failed", str(stop))
            for rest in plan.subtasks[n:]:
                _set_status(run, rest, "skipped", f"skipped: {stop}")
            raise
        _set_status(run, sub, "completed" if outcome.success else "failed", outcome.answer)
        if outcome.success:
            done.append((sub.description, outcome.answer))
    if total == 1:
        only = plan.subtasks[0]
        return Outcome(
            "complete" if only.status == "completed" else "max_iterations",
            only.result,
            only.status == "completed",
        )
    return await _final_summary(run, task_text, plan)


async def _make_plan(run: RunHost, task_text: str) -> Plan:
    """Ask the model for a JSON plan."""
    request = run.conversation.open(
        prompts.plan_request(task_text, run.tools.names()),
        system="You are lsp-agent, a coding agent planning a task in a code workspace.",
    )
    reply = await run.conversation.complete(request, None)
    return parse_plan(reply.content, run.task)


def _set_status(run: RunHost, sub: SubTask, status: str, result: str = "") -> None:
    """Update a subtask and report it."""
    sub.status = status
    if result:
        sub.result = result
    run.events.emit("subtask", id=sub.id, description=sub.description, status=status, result=sub.result)


async def _final_summary(run: RunHost, task_text: str, plan: Plan) -> Outcome:
    """The final answer of a planned run."""
    results = [(t.description, t.status, t.result) for t in plan.subtasks]
    success = all(t.status == "completed" for t in plan.subtasks)
    try:
        reply = await run.conversation.complete(
            [{"role": "user", "content": prompts.final_summary_request(task_text, results)}], None
        )
        answer = reply.content.strip()
    except StopRun as stop:
        if stop.stop_reason != "error":
            raise
        answer = ""
    if not answer:
        answer = "\n".join(f"[{status}] {desc}: {result}" for desc, status, result in results)
    failed = [t for t in plan.subtasks if t.status != "completed"]
    if success:
        return Outcome("complete", answer, True)
    return Outcome(
        "complete", answer, False, f"{len(failed)} of {len(plan.subtasks)} subtasks did not complete"
    )
