"""Prompt and tool profiles: `full` for capable models, `small` for small local ones, `auto` choosing between them.

Applied once per run before the first model request (prepare_tools, small_system_for, first_message). Every
profile gets diagnostics after edits and tests before finishing (each a setting), and the relevant code up front.
The small profile also gets: five tools described in one line each, shorter reads, a short system prompt whose
examples use a real path, the named tests' failures in the first message, a forgiving edit_file, loop detection, a
window that fits a 16k server, and the repair loop (agent/repair/repair_loop.py: SEARCH/REPLACE edits in prompt mode, each
tested at once, the run ending when the named tests pass).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from lsp_agent.agent.repair.repair_loop import install_repair_loop, note_first_report
from lsp_agent.agent.repair.repetition import add_repeat_detection
from lsp_agent.agent.repair.small_prompt import ASK_FOR_EDIT, example_turns, small_system_prompt
from lsp_agent.agent.repair.upfront import Budget, failing_tests, upfront_message
from lsp_agent.tools.diagnostics import add_edit_diagnostics
from lsp_agent.tools.lenient_edit import make_edits_lenient
from lsp_agent.tools.test_runs import named_source_files, named_test_files
from lsp_agent.tools.tested_edit_scope import asks_for_test_changes
from lsp_agent.tools.verify import Verification, install_verified_finish

log = logging.getLogger(__name__)

PROFILES = ("auto", "full", "small")
SMALL_TOOLS = ("read_file", "search_text", "edit_file", "run_tests", "task_complete")
SMALL_WINDOW = 16_384
SMALL_READ_LINES = 120
SMALL_SEARCH_RESULTS = 20
SMALL_BUDGET = Budget(code_chars=2000, chunks=2)
FULL_BUDGET = Budget(code_chars=6000, chunks=4)
# "qwen2.5-coder:1.5b", "Llama-3.2-3B-Instruct", "phi3-mini" ... sizes up to 8B count as small
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.I)
_LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")


def choose_profile(settings: Any, model: str) -> str:
    """The profile for this model: the setting, or for `auto` small for models up to 8B, local providers (ollama,
    LM Studio, llamafile) and context windows up to 32k."""
    wanted = getattr(settings, "profile", "auto") or "auto"
    if wanted != "auto":
        return wanted
    window = getattr(settings, "context_window", None)
    if window and window <= 32_768:
        return "small"
    sizes = [float(s) for s in _SIZE.findall(model)]
    if sizes and min(sizes) <= 8:
        return "small"
    if model.startswith(_LOCAL_PROVIDERS):
        return "small"
    return "full"


def example_path(task: str, run: Any) -> str:
    """A real file for the prompt's examples: the first source file the task names, else one from the index."""
    named = named_source_files(task, run.ctx.overlay.is_file)
    if named:
        return named[0]
    for path in _index_paths(run):
        return path
    return "README.md" if run.ctx.overlay.is_file("README.md") else "setup.py"


def _index_paths(run: Any) -> list[str]:
    """Code files the repo map names, best first (none without an index)."""
    found = re.findall(r"^([\w./-]+\.\w+)", getattr(run, "repo_map", "") or "", re.M)
    return [p for p in found if run.ctx.overlay.is_file(p)]


def prepare_tools(run: Any, model: str, client: Any = None) -> str:
    """Choose the run's profile and fit its tools (and, for small, the client's stop sequences) to it, before the
    conversation sees them; returns the profile."""
    settings = run.settings
    if settings.style != "react":
        return "full"  # a run style with its own loop and tools (codeact) keeps them
    profile = choose_profile(settings, model)
    if getattr(settings, "edit_diagnostics", True):
        add_edit_diagnostics(run.registry)
    run.test_targets = named_test_files(run.task, run.ctx.overlay.is_file)
    testing = getattr(settings, "test_before_finish", "auto") != "off"
    if testing:
        editable = asks_for_test_changes(run.task)
        run.verification = Verification(run.test_targets, _permission_check(run), tests_editable=editable)
        install_verified_finish(run.registry, run.verification)
    log.info(
        "run %s: %s profile; tests named by the task: %s", run.run_id, profile, run.test_targets or "none"
    )
    if profile == "small":
        _shrink(run)
        run.edit_testing = install_repair_loop(run, client, _permission_check(run) if testing else None)
    return profile


def small_system_for(run: Any) -> Any:
    """The small profile's system prompt for a tool mode (its examples use a real path of the workspace)."""
    return lambda mode: small_system_prompt(  # written after the repo map is known: examples may come from it
        mode=mode,
        schemas=run.registry.schemas(),
        root_name=run.root.name,
        example_path=example_path(run.task, run),
        blocks=run.edit_blocks,
        tested=getattr(run, "edit_testing", None) is not None,
    )


async def first_message(run: Any, profile: str, task_text: str) -> str:
    """The first user message with the relevant code up front (small: the named tests' report too, and in prompt
    mode with edit blocks a worked example before it, asking for an edit)."""
    if run.settings.style != "react":
        return task_text
    targets = getattr(run, "test_targets", [])
    if profile != "small":
        return await upfront_message(run, task_text, FULL_BUDGET, None)
    report = await failing_tests(run, targets) if targets else None
    run.first_report = report  # sampled line repairs start from it (agent/repair/line_repair.py)
    note_first_report(report, getattr(run, "edit_testing", None), getattr(run, "verification", None))
    blocks = run.edit_blocks and run.conversation.tool_mode == "prompt"
    if blocks:
        run.conversation.examples = example_turns()
    closing = ASK_FOR_EDIT if blocks and (report is not None and not report.passed) else ""
    return await upfront_message(run, task_text, SMALL_BUDGET, report, closing)


def _shrink(run: Any) -> None:
    """The small profile's tools, limits and window."""
    kept = [run.registry.get(name) for name in SMALL_TOOLS if run.registry.get(name) is not None]
    for name in run.registry.names():
        run.registry.unregister(name)
    for tool in kept:  # in SMALL_TOOLS order: task_complete last
        run.registry.register(tool)
    make_edits_lenient(run.registry)
    run.repeats = add_repeat_detection(run.registry)  # the line repairs' calls are forgotten (line_repair.py)
    run.ctx.limits.read_max_lines = SMALL_READ_LINES
    run.ctx.limits.search_max_results = SMALL_SEARCH_RESULTS


def _permission_check(run: Any) -> Any:
    """An async (tool, permission, arguments) -> allowed? through the run's permission gate."""

    async def allowed(tool: str, permission: str, arguments: dict[str, Any]) -> bool:
        decision = await run.tools.gate.check(tool, permission, arguments)
        return bool(decision.allowed)

    return allowed
