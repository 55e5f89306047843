"""`report` over several results files: other samples of one task set on one budget pooled, the ratio taken over
the tasks both agents ran, and files that do not pool refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.repair.__main__ import main
from benchmarks.repair.report import pool_results

BUDGET = {"model": "openai/local", "max_steps": 15, "time_limit": 300.0, "lsp_profile": "small"}


def _run(task: str, agent: str, repaired: bool) -> dict:
    return {
        "task": task,
        "agent": agent,
        "repaired": repaired,
        "failure": "" if repaired else "timeout",
        "steps": 10,
        "seconds": 200.0,
        "prompt_tokens": 900,
        "completion_tokens": 100,
    }


def _results(
    path: Path, agents: list[str], runs: list[dict], commit: str = "abc1234", **budget: object
) -> Path:
    data = {
        "task_file": f"/somewhere/{path.stem}/tasks-seed1.json",
        "agents": agents,
        "budget": {**BUDGET, **budget},
        "results": runs,
    }
    if commit:
        data["commit"] = commit
    path.write_text(json.dumps(data))
    return path


def test_samples_pool_and_the_ratio_counts_only_the_tasks_both_agents_ran(tmp_path: Path, capsys) -> None:
    lsp_only = _results(tmp_path / "a.json", ["lsp-agent"], [_run("t1", "lsp-agent", True)])
    both = _results(
        tmp_path / "b.json",
        ["lsp-agent", "mini-swe-agent"],
        [
            _run("t2", "lsp-agent", True),
            _run("t2", "mini-swe-agent", True),
            _run("t3", "lsp-agent", True),
            _run("t3", "mini-swe-agent", False),
        ],
        commit="def5678+changes",
    )
    mini_only = _results(  # mini-swe-agent has no profile: its file's setting does not matter
        tmp_path / "c.json",
        ["mini-swe-agent"],
        [_run("t4", "mini-swe-agent", False)],
        commit="",
        lsp_profile="auto",
    )
    pooled = pool_results([lsp_only, both, mini_only])
    assert pooled["agents"] == ["lsp-agent", "mini-swe-agent"]
    assert len(pooled["results"]) == 6 and pooled["budget"]["lsp_profile"] == "small"
    assert main(["report", str(lsp_only), str(both), str(mini_only)]) == 0
    out = capsys.readouterr().out
    assert "3/3" in out and "1/3" in out  # each agent's own tasks
    assert "(2/2 vs 1/2) on the 2 tasks both ran" in out  # the ratio: t2 and t3 only
    assert f"from {lsp_only}: 1 runs of lsp-agent, lsp-agent at abc1234" in out
    assert f"from {both}: 4 runs of lsp-agent, mini-swe-agent, lsp-agent at def5678+changes" in out
    assert f"from {mini_only}: 1 runs of mini-swe-agent\n" in out


def test_one_file_reports_as_before_with_its_source(tmp_path: Path, capsys) -> None:
    runs = [_run("t1", "lsp-agent", True), _run("t1", "mini-swe-agent", False)]
    path = _results(tmp_path / "a.json", ["lsp-agent", "mini-swe-agent"], runs)
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "inf (the baseline repaired none) (1/1 vs 0/1)\n" in out  # all tasks paired: no "on the N tasks"


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        ({"max_steps": 20}, "ran with max_steps 20, "),
        ({"lsp_profile": "full"}, "lsp-agent ran with the profiles full, small"),
        ({"task": "t1"}, "lsp-agent ran t1 in both "),
    ],
)
def test_files_that_do_not_pool_are_refused_with_the_reason(
    tmp_path: Path, capsys, second: dict, reason: str
) -> None:
    first = _results(tmp_path / "a.json", ["lsp-agent"], [_run("t1", "lsp-agent", True)])
    task = second.pop("task", "t2")
    other = _results(tmp_path / "b.json", ["lsp-agent"], [_run(task, "lsp-agent", False)], **second)
    with pytest.raises(ValueError, match=reason.split(",")[0]):
        pool_results([first, other])
    assert main(["report", str(first), str(other)]) == 2
    assert reason in capsys.readouterr().err


def test_results_of_another_task_set_are_refused(tmp_path: Path) -> None:
    first = _results(tmp_path / "a.json", ["lsp-agent"], [_run("t1", "lsp-agent", True)])
    other = tmp_path / "b.json"
    data = json.loads(first.read_text())
    other.write_text(json.dumps({**data, "task_file": "/x/tasks-seed2.json"}))
    with pytest.raises(ValueError, match="ran the tasks of /x/tasks-seed2.json"):
        pool_results([first, other])
