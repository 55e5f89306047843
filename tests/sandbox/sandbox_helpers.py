"""Helpers for the sandbox tests: the tiny project's sources, workspace snapshots, scripted-model runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.sandbox.isolation import Isolation, current_isolation

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def copy_mode_isolation() -> Isolation:
    """This machine's isolation without the overlay mount (forces the copied scratch workspace)."""
    here = current_isolation()
    return Isolation(overlay=False, bwrap=here.bwrap, unshare_net=here.unshare_net, namespace=here.namespace)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes (to prove a workspace was not touched)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Outcome:
    """A finished scripted run."""

    result: Any
    events: list[Any]
    requests: list[dict]
    kinds: list[str] = field(default_factory=list)
    scored: list[dict] = field(default_factory=list)  # the requests that scored a prompt (`echo`)

    def of(self, kind: str) -> list[dict]:
        """Data of the events of one kind."""
        return [e.data for e in self.events if e.kind == kind]


async def run_scripted(root: Path, script: list[dict], task: str, **kw: Any) -> Outcome:
    """An AgentRun against the scripted model through litellm; keyword arguments go to Settings or AgentRun (and
    `prompt_scores` to the server: how it scores prompts sent with `echo`)."""
    from lsp_agent.agent.loop.run import AgentRun
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.config import Settings
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    run_kw = {k: kw.pop(k) for k in list(kw) if k in ("permission", "registry", "overlay", "index")}
    events: list[Any] = []
    with ScriptedModelServer(script, prompt_scores=kw.pop("prompt_scores", None)) as server:
        settings = Settings(**{"model": "openai/scripted", **kw}, api_base=server.base_url, api_key="test")
        client = ModelClient(settings, retry_base=0.01, max_retries=1)
        run = AgentRun(task, settings, root, sink=events.append, model_client=client, **run_kw)
        result = await run.run()
    return Outcome(result, events, server.requests, [e.kind for e in events], server.scored)


def asker(answer: str, log: list[tuple[str, dict]] | None = None) -> Any:
    """A PermissionAsker that always answers `answer` and records what it was asked."""

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        if log is not None:
            log.append((tool, arguments))
        return answer

    return ask
