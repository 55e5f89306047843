"""Planning mode: JSON plans with dependencies, ordering, fallbacks and subtask results flowing forward."""

from __future__ import annotations

import json

from agent_support import call, done, run_script

from lsp_agent.agent.loop.planner import parse_plan


def _plan(*subtasks: tuple[int, str, list[int]]) -> dict:
    body = {"subtasks": [{"id": i, "description": d, "dependencies": deps} for i, d, deps in subtasks]}
    return {"content": json.dumps(body)}


def test_dependency_order_is_respected():
    text = json.dumps(
        {
            "subtasks": [
                {"id": 3, "description": "test", "dependencies": [1, 2]},
                {"id": 2, "description": "fix", "dependencies": [1]},
                {"id": 1, "description": "read", "dependencies": []},
            ]
        }
    )
    plan = parse_plan(text, "task")
    assert plan.fallback is None and [t.id for t in plan.subtasks] == [1, 2, 3]


def test_plan_in_a_fence_with_prose_and_trailing_comma():
    text = (
        'Here is the plan:\n```json\n{"subtasks": [{"id": 1, "description": "a", "dependencies": [],},]}\n```'
    )
    assert [t.description for t in parse_plan(text, "task").subtasks] == ["a"]


def test_invalid_plans_fall_back_to_one_task():
    cases = {
        "no json here": "not a JSON object",
        '{"steps_missing": 1}': 'no "subtasks" list',
        '{"subtasks": [{"id": 1, "description": "a", "dependencies": [2]}, {"id": 2, "description": "b", "dependencies": [1]}]}': "cycle",
        '{"subtasks": [{"id": 1, "description": "a", "dependencies": [7]}]}': "unknown subtask",
        '{"subtasks": [{"id": 1, "description": "a"}, {"id": 1, "description": "b"}]}': "repeats",
        '{"subtasks": [{"id": 1, "description": ""}]}': "no description",
        '{"subtasks": [{"id": "x", "description": "a"}]}': "not a number",
    }
    for text, reason in cases.items():
        plan = parse_plan(text, "the whole task")
        assert [t.description for t in plan.subtasks] == ["the whole task"], text
        assert reason in plan.fallback, (text, plan.fallback)


async def test_planned_run_executes_subtasks_in_order_with_earlier_results(workspace):
    script = [
        _plan((2, "fix add", [1]), (1, "read calc", [])),
        {"content": "", "tool_calls": [call("read_file", path="pkg/calc.py")]},
        done("add subtracts instead of adding"),
        {
            "content": "",
            "tool_calls": [call("edit_file", path="pkg/calc.py", old_text="a - b", new_text="a + b")],
        },
        done("add fixed"),
        {"content": "Read calc.py and fixed add to return a + b."},
    ]
    transcript = workspace.parent / "planned.jsonl"
    o = await run_script(workspace, script, plan=True, transcript=str(transcript))
    r = o.result
    assert (
        r.success
        and r.stop_reason == "complete"
        and r.answer == "Read calc.py and fixed add to return a + b."
    )
    # the transcript holds every conversation whole: each one's first request logs it from message 0
    logged = [json.loads(line) for line in transcript.read_text().splitlines()]
    requests = [rec for rec in logged if rec["type"] == "request"]
    assert [rec["first_index"] for rec in requests] == [0, 0, 2, 0, 2, 0]
    assert "Your current subtask (1/2): read calc" in requests[1]["messages"][1]["content"]
    assert "return a + b" in r.proposal.unified_diff()
    assert "JSON" in o.requests[0]["messages"][-1]["content"] and "tools" not in o.requests[0]
    plan_event = o.of("plan")[0]
    assert [t["id"] for t in plan_event["subtasks"]] == [1, 2] and plan_event["fallback"] is None
    second_task = o.requests[3]["messages"][1]["content"]
    assert (
        "Results of the subtasks finished so far:\n- read calc: add subtracts instead of adding"
        in second_task
    )
    assert "Your current subtask (2/2): fix add" in second_task
    assert [(d["id"], d["status"]) for d in o.of("subtask")] == [
        (1, "running"),
        (1, "completed"),
        (2, "running"),
        (2, "completed"),
    ]
    assert "[completed] fix add: add fixed" in o.requests[-1]["messages"][-1]["content"]
    assert r.iterations == 6


async def test_failed_subtask_skips_its_dependents(workspace):
    script = [
        _plan((1, "explore", []), (2, "change", [1]), (3, "document", [])),
        {"content": "", "tool_calls": [call("list_files")]},  # subtask 1 never completes (max_iterations=1)
        done("documented"),  # subtask 3
        {"content": "Only the documentation part was done."},
    ]
    o = await run_script(workspace, script, plan=True, max_iterations=1)
    statuses = {d["id"]: d["status"] for d in o.of("subtask")}
    assert statuses == {1: "failed", 2: "skipped", 3: "completed"}
    assert not o.result.success and "2 of 3 subtasks" in o.result.error
    assert o.result.answer == "Only the documentation part was done."


async def test_invalid_plan_falls_back_to_a_single_task(workspace):
    script = [{"content": "Sure! I'll just fix it."}, done("fixed directly")]
    o = await run_script(workspace, script, plan=True)
    assert o.result.success and o.result.answer == "fixed directly"
    assert "not a JSON object" in o.of("plan")[0]["fallback"]
    assert o.requests[1]["messages"][1]["content"].endswith("Task: fix the add function")


def test_seed_style_bare_list_of_tool_steps():
    text = '[{"tool": "read_file", "reason": "see the code"}, {"tool": "edit_file", "reason": "fix it"}]'
    plan = parse_plan(text, "task")
    assert plan.fallback is None
    assert [t.description for t in plan.subtasks] == [
        "see the code (use read_file)",
        "fix it (use edit_file)",
    ]
    assert plan.subtasks[1].dependencies == [1]
