"""Run profiles: the strategy object a run is given, `full` for capable models (here: the interface with its
defaults), `small` for small local ones (agent/repair/small_profile.py), and `auto` choosing between them.

The loop calls a profile at these points only: prepare (fit the tools to the profile before the conversation sees
them), system_prompt, first_message (the relevant code up front), before_loop (work that may end the run before
it), reply_edit (a reply that is an edit without a tool call), finished_answer and refusal (whether the run ends
now, whether a plain answer may end it), after_correction and after_step (the conversation after a failed or any
step), after_loop (test a proposal left untested) and tests_failing (for the proposal's checks). Every profile gets
diagnostics after edits and tests before finishing (each a setting), and the relevant code up front.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.repair.upfront import Budget, upfront_message
from lsp_agent.tools.diagnostics import add_edit_diagnostics
from lsp_agent.tools.test_runs import named_source_files, named_test_files
from lsp_agent.tools.tested_edit_scope import asks_for_test_changes
from lsp_agent.tools.verify import Verification, install_verified_finish, test_at_end

if TYPE_CHECKING:
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.agent.model.parsing import ToolCall
    from lsp_agent.agent.outcome import Outcome

log = logging.getLogger(__name__)

PROFILES = ("auto", "full", "small")
FULL_BUDGET = Budget(code_chars=6000, chunks=4)
# "qwen2.5-coder:1.5b", "Llama-3.2-3B-Instruct", "phi3-mini" ... sizes up to 8B count as small
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.I)
_LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")
Message = dict[str, Any]


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


class RunProfile:
    """The full profile, and the interface the loop calls on every profile (the small profile overrides it)."""

    name = "full"
    edit_blocks = False  # whether a SEARCH/REPLACE block in a prompt-mode reply is an edit
    window: int | None = None  # the context window's cap when the context_window setting names none

    def __init__(self) -> None:
        self.test_targets: list[str] = []  # the tests the task names
        self.verification: Verification | None = None  # the tests run before finishing, when they run

    def prepare(self, run: Any, client: ModelClient | None = None) -> None:
        """Fit the run's tools to the profile before the conversation sees them: diagnostics after edits, the
        tests the task names run before finishing (a run style with its own loop and tools keeps them)."""
        settings = run.settings
        if settings.style != "react":
            return
        if getattr(settings, "edit_diagnostics", True):
            add_edit_diagnostics(run.registry)
        self.test_targets = named_test_files(run.task, run.ctx.overlay.is_file)
        if self.testing_before_finish(run):
            editable = asks_for_test_changes(run.task)
            self.verification = Verification(
                self.test_targets, permission_check(run), tests_editable=editable
            )
            install_verified_finish(run.registry, self.verification)
        log.info(
            "run %s: %s profile; tests named by the task: %s",
            run.run_id,
            self.name,
            self.test_targets or "none",
        )

    @staticmethod
    def testing_before_finish(run: Any) -> bool:
        """Whether the tests run before a finish (the test_before_finish setting)."""
        return getattr(run.settings, "test_before_finish", "auto") != "off"

    def system_prompt(self, run: Any, mode: str) -> str:
        """The system prompt for tool mode `mode`: the run style's."""
        return run.style.system_prompt(run, mode)

    async def first_message(self, run: Any, task_text: str) -> str:
        """The first user message, with the relevant code up front (react style)."""
        if run.settings.style != "react":
            return task_text
        return await upfront_message(run, task_text, FULL_BUDGET, None)

    async def before_loop(self, run: Any) -> Outcome | None:
        """Work before the loop; an outcome ends the run there, None goes on to the loop."""
        return None

    def reply_edit(self, run: Any, text: str) -> ToolCall | None:
        """The edit a reply without a tool call makes, if the profile reads one in it."""
        return None

    def finished_answer(self, run: Any) -> str | None:
        """The answer that ends the run after this step (its edit made the task's tests pass), else None."""
        return None

    def refusal(self, run: Any) -> str | None:
        """Why a plain-text answer cannot end the run yet (sent to the model), else None."""
        return None

    def after_correction(self, run: Any, messages: list[Message]) -> None:
        """A reply had to be corrected (it could not be read, or could not end the run)."""

    def after_step(self, run: Any, messages: list[Message]) -> None:
        """A step's tool calls ran: the conversation `messages` may be trimmed."""

    async def after_loop(self, run: Any, outcome: Outcome) -> Outcome:
        """The loop's outcome, with the tests' result when a successful run left its final proposal untested."""
        if outcome.success and self.verification is not None:
            if (tests := await test_at_end(self.verification, run.ctx)) is not None:
                outcome.answer = f"{outcome.answer}\n\n{tests}".strip()
        return outcome

    def tests_failing(self, run: Any) -> str | None:
        """The failing tests' report when they last ran on the proposal as it is now and failed; None when they
        passed, were not run, or the proposal changed since."""
        if self.verification is not None and (tested := self.verification.tested_now(run.ctx)) is not None:
            return None if tested[0] else tested[1]
        return None


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


def permission_check(run: Any) -> Any:
    """An async (tool, permission, arguments) -> allowed? through the run's permission gate."""

    async def allowed(tool: str, permission: str, arguments: dict[str, Any]) -> bool:
        decision = await run.tools.gate.check(tool, permission, arguments)
        return bool(decision.allowed)

    return allowed
