"""Shared pytest setup: no network, a private cache dir, litellm kept offline."""

from __future__ import annotations

import compileall
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# lsp_agent's bytecode, written once (__pycache__/, ignored by git): the hundreds of Python processes a run starts
# (servers, `ask`, scripted models) read it instead of compiling their imports again, ~0.2 s of CPU each, where
# PYTHONDONTWRITEBYTECODE=1 (CI's machine has it) stops Python writing it itself. The variable stays: nothing else
# (the tests' projects) gets a __pycache__/.
compileall.compile_dir(Path(__file__).resolve().parents[1] / "lsp_agent", quiet=1)
for _var in (
    "LSP_AGENT_MODEL",
    "LSP_AGENT_API_BASE",
    "LSP_AGENT_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
):
    os.environ.pop(_var, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files with slow tests first: two pytest-xdist workers then end on short files, not one on a long one."""
    slow_files = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow_files)  # stable: order kept otherwise


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own XDG cache so index databases never leak between tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv(
        "XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config"))
    )  # remembered permissions
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))  # last proposal, spend


@pytest.fixture(scope="session", autouse=True)
def _no_pytest_plugins_in_subprocesses() -> Iterator[None]:
    """pytest runs that tests start (a tiny project's tests, in a sandbox, through the agent's tools or a server a
    module shares) load no plugins: the projects need none, and this venv's (hypothesis, pytest-lsp, ...) cost
    ~1.5 s CPU per run. Set for the session (pytest-xdist's workers are started before it, with their plugins)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        yield


@pytest.fixture(scope="session")
def litellm_imported() -> None:
    """litellm imported once per test process, before the first test that needs it (a first import takes seconds)."""
    from lsp_agent.agent.model.client import get_litellm

    get_litellm()
