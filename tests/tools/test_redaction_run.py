"""A real agent run never sends a secret to the model: what the scripted model server received is checked.

The run goes through litellm's HTTP path to the scripted OpenAI-compatible server, with the exec tools (a real
sandbox) and a real MCP server over stdio. It reads a secret file, reads and searches a file that hard-codes a
token, runs a command that prints the environment and the files, and calls an MCP tool that returns a key.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.run import AgentRun
from lsp_agent.agent.model.client import get_litellm
from lsp_agent.config import Settings
from lsp_agent.mcp import McpManager, attach_mcp_tools
from lsp_agent.mcp.config import parse_server
from lsp_agent.testing.scripted_model import ScriptedModelServer
from lsp_agent.tools.exec_tools import register_exec_tools
from lsp_agent.tools.registry import default_registry

NOTES_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "notes_server.py"
ENV_KEY = "sk-proj-Zq8RkT3vYw0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # only in the workspace's .env
DB_URL = "postgres://admin:Xk29-pw-7Hq@db.internal/prod"  # only in the workspace's .env
TOKEN = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # in the environment and hard-coded in a source file
DEPLOY = "dk-61c7a0e95f3b4d28a1e0c9b7f6d5e4a3"  # in the environment, the sandbox and the MCP server
SECRETS = (ENV_KEY, DB_URL, TOKEN, DEPLOY)

pytestmark = pytest.mark.slow


def step(tool: str, **arguments: object) -> dict:
    return {"content": f"calling {tool}", "tool_calls": [{"name": tool, "arguments": arguments}]}


def assert_clean(text: str, where: str) -> None:
    """No secret, and no 12-character start or end piece of one, in `text`."""
    for secret in SECRETS:
        for piece in (secret, secret[:12], secret[-12:]):
            assert piece not in text, f"{where} holds a piece of a secret: {piece!r}"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SERVICE_API_TOKEN", TOKEN)
    monkeypatch.setenv("DEPLOY_KEY", DEPLOY)
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text(f"OPENAI_API_KEY={ENV_KEY}\nDATABASE_URL={DB_URL}\nDEBUG=true\n")
    (root / "src" / "settings.py").write_text(
        f'import os\n\nAPI_KEY = os.environ["OPENAI_API_KEY"]\nTOKEN = "{TOKEN}"\n'
    )
    return root


async def test_no_secret_reaches_the_model_events_or_transcript(project: Path, tmp_path: Path) -> None:
    get_litellm()
    transcript = tmp_path / "run.jsonl"
    script = [
        step("read_file", path=".env"),
        step("read_file", path="src/settings.py"),
        step("search_text", pattern="TOKEN"),
        step("search_text", pattern="OPENAI_API_KEY", path="."),
        step("run_command", argv=["sh", "-c", "env; cat .env; cat src/settings.py"]),
        step("notes__env_var", name="DEPLOY_KEY"),
        step("task_complete", summary="looked around"),
    ]
    config = parse_server(
        "notes", {"command": sys.executable, "args": [str(NOTES_SERVER)], "env": {"DEPLOY_KEY": DEPLOY}}
    )
    manager = McpManager([config])
    events: list[AgentEvent] = []
    try:
        with ScriptedModelServer(script) as model:
            settings = Settings(
                model="openai/scripted",
                api_base=model.base_url,
                api_key="test",
                tool_calling="native",
                transcript=str(transcript),
                permissions={"run_command": "allow", "notes__*": "allow"},
            )
            registry = register_exec_tools(default_registry())
            settings, errors = await attach_mcp_tools(manager, registry, settings)
            assert errors == []
            run = AgentRun("find the settings", settings, project, sink=events.append, registry=registry)
            result = await run.run()
            requests = list(model.requests)
    finally:
        await manager.aclose()
    assert result.success, result
    results = {e.data["name"]: e.data for e in events if e.kind == "tool_result"}
    assert set(results) == {"read_file", "search_text", "run_command", "notes__env_var", "task_complete"}
    sent = json.dumps(requests)
    assert_clean(sent, "the requests the model server received")
    assert_clean(json.dumps([e.data for e in events], default=str), "the run's events")
    assert_clean(transcript.read_text(), "the transcript")
    assert len(requests) == len(script)
    observations = [json.dumps(r["messages"][-1]) for r in requests[1:]]
    assert "refused: .env is a secret file (secretFiles)" in observations[0]
    assert 'TOKEN = \\"[REDACTED:SERVICE_API_TOKEN]\\"' in observations[1]
    assert "[REDACTED:SERVICE_API_TOKEN]" in observations[2]
    assert ".env:" not in observations[3] and "src/settings.py:3:" in observations[3]
    assert (
        "DEPLOY_KEY=[REDACTED:DEPLOY_KEY]" in observations[4]
    )  # the sandbox keeps this variable; we hide it
    assert "[REDACTED:SERVICE_API_TOKEN]" in observations[4]  # cat src/settings.py
    assert "[REDACTED:DEPLOY_KEY]" in observations[5]


async def test_codeact_execution_results_are_redacted_too(project: Path) -> None:
    """CodeAct runs code outside the tool registry; its results pass the same redaction."""
    get_litellm()
    code = (
        "import os, pathlib\n"
        "print('deploy', os.environ.get('DEPLOY_KEY'))\n"
        "print(pathlib.Path('src/settings.py').read_text())\n"
        "env = pathlib.Path('.env')\n"
        "print(env.read_text() if env.exists() else 'no .env in the sandbox')\n"
    )
    script = [
        {"content": json.dumps({"thought": "look", "action": "execute_code", "code": code})},
        {"content": json.dumps({"thought": "done", "action": "provide_answer", "final_answer": "looked"})},
    ]
    events: list[AgentEvent] = []
    with ScriptedModelServer(script) as model:
        settings = Settings(
            model="openai/scripted",
            api_base=model.base_url,
            api_key="test",
            style="codeact",
            permissions={"execute_code": "allow"},
        )
        result = await AgentRun("look around", settings, project, sink=events.append).run()
        requests = list(model.requests)
    assert result.success, result
    assert_clean(json.dumps(requests), "the requests the model server received")
    assert_clean(json.dumps([e.data for e in events], default=str), "the run's events")
    observation = requests[1]["messages"][-1]["content"]
    assert observation.startswith("EXECUTION_RESULT:") and "[REDACTED:SERVICE_API_TOKEN]" in observation
    assert "deploy [REDACTED:DEPLOY_KEY]" in observation


async def test_an_editor_selection_sent_as_context_is_redacted(project: Path) -> None:
    """ "Ask about this selection" on a file holding a token: the selection reaches the model without it."""
    get_litellm()
    script = [{"content": "nothing to do"}]
    with ScriptedModelServer(script) as model:
        settings = Settings(model="openai/scripted", api_base=model.base_url, api_key="test")
        context = f'src/settings.py lines 4-4:\nTOKEN = "{TOKEN}"'
        result = await AgentRun("what is this?", settings, project, context=context).run()
        requests = list(model.requests)
    assert result.success
    assert_clean(json.dumps(requests), "the request with the selection")
    assert 'TOKEN = \\"[REDACTED:SERVICE_API_TOKEN]\\"' in json.dumps(requests[0]["messages"])
