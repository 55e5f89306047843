"""Planning: the model's JSON plan of subtasks with dependencies, validated and put in dependency order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.agent.model.parsing import ParseError, load_json_object

MAX_SUBTASKS = 12


@dataclass
class SubTask:
    """One step of a plan."""

    id: int
    description: str
    dependencies: list[int] = field(default_factory=list)
    status: str = "pending"  # pending | running | completed | failed | skipped
    result: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "description": self.description,
            "dependencies": list(self.dependencies),
            "status": self.status,
            "result": self.result,
        }


@dataclass
class Plan:
    """Subtasks in an order that respects their dependencies; `fallback` says why the plan is a single task."""

    subtasks: list[SubTask]
    fallback: str | None = None


def single_task_plan(task: str, reason: str) -> Plan:
    """The plan used when the model's plan is unusable: the whole task as one subtask."""
    return Plan([SubTask(1, task.strip())], fallback=reason)


def parse_plan(text: str, task: str) -> Plan:
    """The model's plan in dependency order, or a one-task plan naming what was wrong."""
    raw: Any = None
    bracket, brace = text.find("["), text.find("{")
    if 0 <= bracket < brace or (bracket >= 0 and brace < 0):
        raw = _json_list(text)
    if raw is None:
        try:
            obj = load_json_object(text)
        except ParseError as exc:
            return single_task_plan(task, f"the plan was not a JSON object ({exc})")
        raw = obj.get("subtasks", obj.get("steps", obj.get("plan")))
    if not isinstance(raw, list) or not raw:
        return single_task_plan(task, 'the plan has no "subtasks" list')
    if len(raw) > MAX_SUBTASKS:
        return single_task_plan(task, f"the plan has {len(raw)} subtasks (at most {MAX_SUBTASKS})")
    subtasks: list[SubTask] = []
    for n, item in enumerate(raw, 1):
        if isinstance(item, str):
            item = {"id": n, "description": item, "dependencies": [n - 1] if n > 1 else []}
        if not isinstance(item, dict):
            return single_task_plan(task, f"subtask {n} is not an object")
        description = str(
            item.get("description") or item.get("task") or item.get("reason") or item.get("step") or ""
        ).strip()
        if description and isinstance(item.get("tool"), str):
            description = f"{description} (use {item['tool']})"
        if not description:
            return single_task_plan(task, f"subtask {n} has no description")
        try:
            sid = int(item.get("id", n))
            deps = [int(d) for d in item.get("dependencies") or item.get("depends_on") or []]
        except (TypeError, ValueError):
            return single_task_plan(task, f"subtask {n} has an id or dependency that is not a number")
        subtasks.append(SubTask(sid, description, deps))
    if not any(isinstance(item, dict) and ("dependencies" in item or "depends_on" in item) for item in raw):
        for before, after in zip(subtasks, subtasks[1:], strict=False):  # no dependency data: a sequence
            after.dependencies = [before.id]
    ids = [t.id for t in subtasks]
    if len(set(ids)) != len(ids):
        return single_task_plan(task, "the plan repeats a subtask id")
    for t in subtasks:
        unknown = [d for d in t.dependencies if d not in ids]
        if unknown:
            return single_task_plan(task, f"subtask {t.id} depends on unknown subtask(s) {unknown}")
        if t.id in t.dependencies:
            return single_task_plan(task, f"subtask {t.id} depends on itself")
    ordered = dependency_order(subtasks)
    if ordered is None:
        return single_task_plan(task, "the plan's dependencies form a cycle")
    return Plan(ordered)


def _json_list(text: str) -> list[Any] | None:
    """A top-level JSON list in the text (seed 001's plan is a bare list of steps), or None."""
    start = text.find("[")
    end = text.rfind("]")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, list) else None


def dependency_order(subtasks: list[SubTask]) -> list[SubTask] | None:
    """A topological order (stable: plan order among ready subtasks), or None when there is a cycle."""
    remaining = list(subtasks)
    done: set[int] = set()
    ordered: list[SubTask] = []
    while remaining:
        ready = next((t for t in remaining if all(d in done for d in t.dependencies)), None)
        if ready is None:
            return None
        ordered.append(ready)
        done.add(ready.id)
        remaining.remove(ready)
    return ordered
