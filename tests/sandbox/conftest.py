"""Fixtures for sandbox tests: a small project with a failing test, a sandbox, scripted-model runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.sandbox.isolation import Isolation, current_isolation
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.workspace.overlay import Overlay

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny package whose test fails until add() is fixed."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "notes.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("build/\n")
    return root


def copy_mode_isolation() -> Isolation:
    """This machine's isolation without the overlay mount (forces the copied scratch workspace)."""
    here = current_isolation()
    return Isolation(overlay=False, bwrap=here.bwrap, unshare_net=here.unshare_net)


@pytest.fixture(params=["auto", "copy"])
def sandbox(request: pytest.FixtureRequest, project: Path) -> Iterator[Sandbox]:
    """A sandbox over `project`: the best mechanism here, and the plain-copy fallback."""
    isolation = current_isolation() if request.param == "auto" else copy_mode_isolation()
    box = Sandbox(project, isolation=isolation, memory_mib=512)
    yield box
    box.close()


@pytest.fixture
def overlay(project: Path) -> Overlay:
    """The run's overlay over `project`."""
    return Overlay(project)


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

    def of(self, kind: str) -> list[dict]:
        """Data of the events of one kind."""
        return [e.data for e in self.events if e.kind == kind]


async def run_scripted(root: Path, script: list[dict], task: str, **kw: Any) -> Outcome:
    """An AgentRun against the scripted model through litellm; keyword arguments go to Settings or AgentRun."""
    from lsp_agent.agent.model import ModelClient
    from lsp_agent.agent.run import AgentRun
    from lsp_agent.config import Settings
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    run_kw = {k: kw.pop(k) for k in list(kw) if k in ("permission", "registry", "overlay")}
    events: list[Any] = []
    with ScriptedModelServer(script) as server:
        settings = Settings(model="openai/scripted", api_base=server.base_url, api_key="test", **kw)
        client = ModelClient(settings, retry_base=0.01, max_retries=1)
        run = AgentRun(task, settings, root, sink=events.append, model_client=client, **run_kw)
        result = await run.run()
    return Outcome(result, events, server.requests, [e.kind for e in events])


def asker(answer: str, log: list[tuple[str, dict]] | None = None) -> Any:
    """A PermissionAsker that always answers `answer` and records what it was asked."""

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        if log is not None:
            log.append((tool, arguments))
        return answer

    return ask
