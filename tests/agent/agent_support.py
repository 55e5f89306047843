"""Helpers for agent tests (a module of its own: `conftest` names collide across test folders)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.loop.run import AgentRun, RunResult
from lsp_agent.agent.model.client import ModelClient
from lsp_agent.config import Settings
from lsp_agent.testing.scripted_model import ScriptedModelServer


def scripted_settings(server: ScriptedModelServer, **changes: Any) -> Settings:
    """Settings for the scripted model at `server`."""
    return Settings(model="openai/scripted", api_base=server.base_url, api_key="test", **changes)


@dataclass
class Outcome:
    """A finished run with everything a test may look at."""

    result: RunResult
    events: list[AgentEvent]
    requests: list[dict]
    run: AgentRun
    server: ScriptedModelServer
    kinds: list[str] = field(default_factory=list)

    def of(self, kind: str) -> list[dict]:
        """Data of the events of one kind."""
        return [e.data for e in self.events if e.kind == kind]


async def run_script(
    root: Path, script: list[dict], task: str = "fix the add function", *, stream: bool = False, **kw: Any
) -> Outcome:
    """Run the agent on `root` against a scripted model; keyword arguments go to Settings or AgentRun."""
    run_kw = {
        k: kw.pop(k)
        for k in list(kw)
        if k in ("permission", "session", "registry", "context", "overlay")
        or (k == "profile" and not isinstance(kw[k], str))  # a RunProfile object; a name is the setting
    }
    events: list[AgentEvent] = []
    with ScriptedModelServer(script) as server:
        settings = scripted_settings(server, **kw)
        client = ModelClient(settings, retry_base=0.01, max_retries=3, stream=stream)
        run = AgentRun(task, settings, root, sink=events.append, model_client=client, **run_kw)
        result = await run.run()
    return Outcome(result, events, server.requests, run, server, [e.kind for e in events])


def call(name: str, **arguments: Any) -> dict:
    """A native tool call for a script step."""
    return {"name": name, "arguments": arguments}


def done(summary: str = "done") -> dict:
    """A script step finishing the task natively."""
    return {"content": "finished", "tool_calls": [call("task_complete", summary=summary)]}
