"""`lsp-agent ask --continue / --retry`, `lsp-agent conversation`, @mentions and project rules from a terminal."""

from __future__ import annotations

import json
import logging

import pytest
from agent_support import done

from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Sessions land in a private cache dir; the CLI's log handler is taken away again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
    root = logging.getLogger()
    for handler in [h for h in root.handlers if h.get_name() == "lsp-agent-cli"]:
        root.removeHandler(handler)
        handler.close()


def ask(server: ScriptedModelServer, workspace, *args: str) -> int:
    from lsp_agent.cli.main import main

    flags = [
        "--repo",
        str(workspace),
        "--model",
        "openai/scripted",
        "--api-base",
        server.base_url,
        "--api-key",
        "t",
    ]
    return main(["ask", *args, *flags])


def task_message(server: ScriptedModelServer) -> str:
    return server.requests[-1]["messages"][1]["content"]


def test_continue_follows_up_and_retry_runs_the_last_task_again(workspace, capsys):
    answer = "add subtracts: line 2 says a - b. " * 20
    with ScriptedModelServer([done(answer), done("it is in pkg/calc.py"), done("second try")]) as server:
        assert ask(server, workspace, "why does add subtract?") == 0
        first_out = capsys.readouterr().out
        assert "follow up with `ask --continue`" in first_out
        assert ask(server, workspace, "where is it?", "--continue") == 0
        assert answer.strip() in task_message(server) and task_message(server).endswith("Task: where is it?")
        assert ask(server, workspace, "--retry") == 0
        out = capsys.readouterr().out
        assert "retrying run" in out and ": where is it?" in out
        assert "The user discarded this attempt and asked again." in task_message(server)
        assert task_message(server).endswith("Task: where is it?")
    from lsp_agent.cli.main import main

    assert main(["conversation", "--repo", str(workspace), "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert [e["task"] for e in saved["exchanges"]] == [
        "why does add subtract?",
        "where is it?",
        "where is it?",
    ]
    assert [e["retried"] for e in saved["exchanges"]] == [False, True, False]
    assert main(["conversation", "--repo", str(workspace)]) == 0
    shown = capsys.readouterr().out
    assert "> why does add subtract?" in shown and answer.strip() in shown


def test_continue_and_retry_without_an_earlier_ask_say_so(workspace, capsys):
    from lsp_agent.cli.main import main

    assert main(["ask", "more", "--continue", "--repo", str(workspace), "--model", "openai/x"]) == 2
    assert "--continue: no earlier ask in" in capsys.readouterr().err
    assert main(["ask", "--retry", "--repo", str(workspace), "--model", "openai/x"]) == 2
    assert "--retry: no earlier ask in" in capsys.readouterr().err
    assert main(["conversation", "--repo", str(workspace)]) == 1
    assert "no conversation in" in capsys.readouterr().err


def test_mentions_and_rules_reach_the_model_with_status_lines(workspace, capsys):
    (workspace / "AGENTS.md").write_text("Always answer in French.\n")
    with ScriptedModelServer([done("fait")]) as server:
        assert ask(server, workspace, "explain @pkg/calc.py and @mul, not @ghost.py") == 0
        system, task = server.requests[-1]["messages"][0]["content"], task_message(server)
    out = capsys.readouterr().out
    assert "project rules: loaded AGENTS.md (25 B)" in out
    assert "context: attached @pkg/calc.py (6 lines), @mul (pkg/calc.py:5)" in out
    assert "@ghost.py: no file named 'ghost.py' in the workspace; the ask goes on without it" in out
    assert "Always answer in French." in system
    assert "pkg/calc.py (mentioned):" in task and "function mul in pkg/calc.py, lines 5-6" in task
