"""`lsp-agent replay`: a recorded run replayed without a model is identical; a changed prompt, a tool result that
differs and a run that takes another path are reported with a diff and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.agent import prompts
from lsp_agent.agent.model import parsing
from lsp_agent.agent.model.parsing import ParsedReply
from lsp_agent.cli.main import main
from lsp_agent.replay.recording import load_recording
from lsp_agent.testing.scripted_model import ScriptedModelServer


def _action(name: str, **arguments: object) -> str:
    call = json.dumps({"name": name, "arguments": arguments})
    return f"<THOUGHT>Next: {name}.</THOUGHT>\n<ACTION>{call}</ACTION>\nThe output is: something I made up"


SCRIPT = [
    {"content": _action("read_file", path="pkg/calc.py")},
    {"content": _action("edit_file", path="pkg/calc.py", old_text="return a - b", new_text="return a + b")},
    {"content": _action("task_complete", summary="add() adds now")},
]


@pytest.fixture
def recorded(workspace: Path, tmp_path: Path) -> Path:
    """A transcript of a prompt-mode `ask` run against the scripted model."""
    transcript = tmp_path / "run.jsonl"
    with ScriptedModelServer(SCRIPT) as server:
        status = main(
            ["ask", "fix add in pkg/calc.py", "--repo", str(workspace), "--model", "openai/scripted"]
            + ["--api-base", server.base_url, "--api-key", "k", "--tool-calling", "prompt"]
            + ["--transcript", str(transcript)]
        )
    assert status == 0
    return transcript


def test_the_recording_holds_the_whole_requests_and_its_replies(recorded: Path, workspace: Path) -> None:
    recording = load_recording(recorded)
    assert recording.root == workspace and recording.start["mode"] == "prompt"
    assert [len(r.messages) for r in recording.requests] == [2, 4, 6]
    assert recording.requests[2].messages[:2] == recording.requests[0].messages  # deltas made whole again
    assert recording.replies[0]["content"].endswith("</ACTION>")  # cut at the stop sequence, tag restored
    assert [t["name"] for t in recording.tools] == ["read_file", "edit_file", "task_complete"]
    assert [s["content"] for s in recording.script()] == [r["content"] for r in recording.replies]


def test_a_replay_of_an_unchanged_run_is_identical(recorded: Path, capsys) -> None:
    assert main(["replay", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "3 model requests, 3 tool calls; identical to the recording" in out


def test_a_replay_in_another_copy_of_the_workspace_is_identical(
    recorded: Path, workspace: Path, tmp_path
) -> None:
    copy = tmp_path / "elsewhere" / workspace.name  # the system prompt names the folder
    copy.parent.mkdir()
    copy.mkdir()
    (copy / "pkg").mkdir()
    for name in ("pkg/__init__.py", "pkg/calc.py", "README.md"):
        (copy / name).write_text((workspace / name).read_text())
    assert main(["replay", str(recorded), "--repo", str(copy)]) == 0


def test_a_changed_prompt_is_shown_once_with_a_diff(recorded: Path, monkeypatch, capsys) -> None:
    original = prompts.system_prompt
    monkeypatch.setattr(
        prompts, "system_prompt", lambda **kw: original(**kw).replace("coding agent", "programming agent")
    )
    assert main(["replay", str(recorded)]) == 1
    out = capsys.readouterr().out
    assert "1 divergence(s)" in out and "request 1: message 1 (system) differs" in out
    assert "-You are lsp-agent, a coding agent" in out and "+You are lsp-agent, a programming agent" in out


def test_a_tool_result_that_differs_is_reported(recorded: Path, workspace: Path, capsys) -> None:
    calc = workspace / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace("def mul", "def times"))
    assert main(["replay", str(recorded)]) == 1
    out = capsys.readouterr().out
    assert "tool call 1 (read_file): the result differs" in out
    assert "\n-5: def mul(a, b):\n+5: def times(a, b):\n" in out
    assert "request 1: message 1 (system) differs" in out  # the repo map in the system prompt names times()
    assert "message 4 (user) differs" in out  # the observation the model saw changed too


def test_a_run_that_takes_another_path_is_reported(recorded: Path, workspace: Path, capsys) -> None:
    calc = workspace / "pkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return a - b", "return a  -  b"))  # the edit no longer matches
    assert main(["replay", str(recorded)]) == 1
    out = capsys.readouterr().out
    assert "tool call 2 (edit_file): ok True -> False; the result differs" in out


def test_a_transcript_that_cannot_be_replayed_is_named(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "request"}\n')
    assert main(["replay", str(bad)]) == 2
    assert "holds no run (no 'start' record)" in capsys.readouterr().err
    bad.write_text("not json\n")
    assert main(["replay", str(bad)]) == 2
    assert "bad.jsonl:1: not a JSON line" in capsys.readouterr().err


def test_a_parsing_change_that_loses_the_actions_is_caught(recorded: Path, monkeypatch, capsys) -> None:
    def broken(text: str, tags_only: bool) -> ParsedReply:
        return ParsedReply(thought=text, final=text)  # a parser that no longer sees the <ACTION>

    monkeypatch.setattr(parsing, "_parse", broken)
    assert main(["replay", str(recorded)]) == 1
    out = capsys.readouterr().out
    assert "model requests: the replay made 1 where the recording made 3" in out
    assert "tool calls: the replay made 0 where the recording made 3" in out
    assert (
        "end of the run: stop_reason no_tool_call, success True where the recording had stop_reason complete"
        in out
    )


def test_a_run_stopped_before_its_end_replays_up_to_its_last_request(recorded: Path, capsys) -> None:
    lines = recorded.read_text().splitlines()
    third_reply = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "reply"][2]
    recorded.write_text("\n".join(lines[:third_reply]) + "\n")  # killed while waiting for the third reply
    recording = load_recording(recorded)
    assert not recording.finished and len(recording.requests) == 3 and len(recording.replies) == 2
    assert main(["replay", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "3 model requests, 2 tool calls (the recorded run was stopped before its end" in out
    assert "identical to the recording" in out
