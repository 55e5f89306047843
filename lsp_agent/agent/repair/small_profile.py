"""The small profile (small local models), the run profile's other implementation (agent/repair/profile.py).

On top of the full profile's diagnostics, tests before finishing and code up front it gives: five tools described
in one line each, shorter reads, a short system prompt whose examples use a real path, the named tests' failures in
the first message, a forgiving edit_file, loop detection, a window that fits a 16k server, and the repair loop
(agent/repair/repair_loop.py: SEARCH/REPLACE edits in prompt mode, each tested at once, the run ending when the
named tests pass), with sampled line repairs before the loop (agent/repair/line_repair.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_agent.agent.repair.line_repair import repair_lines
from lsp_agent.agent.repair.profile import RunProfile, example_path, permission_check
from lsp_agent.agent.repair.repair_loop import (
    Forgetting,
    install_repair_loop,
    listing_edit_of,
    note_first_report,
    refusal,
    summary,
)
from lsp_agent.agent.repair.repetition import add_repeat_detection
from lsp_agent.agent.repair.small_prompt import ASK_FOR_EDIT, example_turns, small_system_prompt
from lsp_agent.agent.repair.upfront import Budget, failing_tests, upfront_message
from lsp_agent.tools.lenient_edit import make_edits_lenient
from lsp_agent.tools.verify import fingerprint

if TYPE_CHECKING:
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.agent.model.parsing import ToolCall
    from lsp_agent.agent.outcome import Outcome
    from lsp_agent.agent.repair.repetition import RepeatTracker
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.tools.tested_edit import EditTesting

SMALL_TOOLS = ("read_file", "search_text", "edit_file", "run_tests", "task_complete")
SMALL_WINDOW = 16_384
SMALL_READ_LINES = 120
SMALL_SEARCH_RESULTS = 20
SMALL_BUDGET = Budget(code_chars=2000, chunks=2)
Message = dict[str, Any]


class SmallProfile(RunProfile):
    """The small profile: few short tools, SEARCH/REPLACE edits, and (when the task names tests) every edit
    tested at once, the run ending when they pass."""

    name = "small"
    edit_blocks = True
    window = SMALL_WINDOW

    def __init__(self) -> None:
        super().__init__()
        self.testing: EditTesting | None = None  # the tested edits (the task names tests and they may run)
        self.forgetting: Forgetting | None = None
        self.first_report: TestReport | None = None  # the named tests before any edit
        self.repeats: RepeatTracker | None = None

    def prepare(self, run: Any, client: ModelClient | None = None) -> None:
        """The full profile's preparation, then the small tools, limits and the repair loop."""
        super().prepare(run, client)
        self._shrink(run)
        allowed = permission_check(run) if self.testing_before_finish(run) else None
        self.testing = install_repair_loop(run, client, allowed, self.test_targets, self.verification)
        if self.testing is not None:
            self.forgetting = Forgetting(run, self.testing)

    def _shrink(self, run: Any) -> None:
        """The small profile's tools, limits and window."""
        kept = [run.registry.get(name) for name in SMALL_TOOLS if run.registry.get(name) is not None]
        for name in run.registry.names():
            run.registry.unregister(name)
        for tool in kept:  # in SMALL_TOOLS order: task_complete last
            run.registry.register(tool)
        make_edits_lenient(run.registry)
        self.repeats = add_repeat_detection(
            run.registry
        )  # the line repairs' calls are forgotten (line_repair.py)
        run.ctx.limits.read_max_lines = SMALL_READ_LINES
        run.ctx.limits.search_max_results = SMALL_SEARCH_RESULTS

    def system_prompt(self, run: Any, mode: str) -> str:
        """The short system prompt for a tool mode (its examples use a real path of the workspace)."""
        return small_system_prompt(  # written after the repo map is known: examples may come from it
            mode=mode,
            schemas=run.registry.schemas(),
            root_name=run.root.name,
            example_path=example_path(run.task, run),
            blocks=self.edit_blocks,
            tested=self.testing is not None,
        )

    async def first_message(self, run: Any, task_text: str) -> str:
        """The relevant code and the named tests' report up front (in prompt mode a worked example before it,
        asking for an edit)."""
        report = await failing_tests(run, self.test_targets) if self.test_targets else None
        self.first_report = report  # sampled line repairs start from it (agent/repair/line_repair.py)
        note_first_report(report, self.testing, self.verification)
        blocks = self.edit_blocks and run.conversation.tool_mode == "prompt"
        if blocks:
            run.conversation.examples = example_turns()
        closing = ASK_FOR_EDIT if blocks and (report is not None and not report.passed) else ""
        return await upfront_message(run, task_text, SMALL_BUDGET, report, closing)

    async def before_loop(self, run: Any) -> Outcome | None:
        """Sampled line repairs (the repairLines setting), when edits are tested."""
        if self.testing is None or run.settings.repair_lines <= 0:
            return None
        return await repair_lines(run, self.testing, self.first_report, self.repeats)

    def reply_edit(self, run: Any, text: str) -> ToolCall | None:
        """Changed numbered lines written back (prompt mode) are an edit."""
        return None if self.testing is None else listing_edit_of(run, text, self.testing.candidates)

    def finished_answer(self, run: Any) -> str | None:
        """The run's answer once its proposal passes the task's tests."""
        if self.testing is None or not self.testing.verified(run.ctx):
            return None
        return summary(run, self.testing)

    def refusal(self, run: Any) -> str | None:
        """A plain answer while the named tests fail is refused (a few times)."""
        return None if self.testing is None else refusal(run, self.testing, self.verification)

    def after_correction(self, run: Any, messages: list[Message]) -> None:
        """A reply that had to be corrected counts as a failed attempt."""
        if self.testing is not None and self.forgetting is not None:
            self.testing.failed()
            self.forgetting(messages)

    def after_step(self, run: Any, messages: list[Message]) -> None:
        """Earlier failed attempts leave the conversation."""
        if self.forgetting is not None:
            self.forgetting(messages)

    async def after_loop(self, run: Any, outcome: Outcome) -> Outcome:
        """Tested edits test each edit: nothing is left to test at the end."""
        return outcome if self.testing is not None else await super().after_loop(run, outcome)

    def tests_failing(self, run: Any) -> str | None:
        """The tests' report as they last ran (at a finish, or after a tested edit) on the proposal as it is."""
        if self.verification is not None and self.verification.tested_now(run.ctx) is not None:
            return super().tests_failing(run)
        kept = self.testing.kept if self.testing is not None else None
        if kept is not None and kept[0] == fingerprint(run.ctx):
            return kept[1]
        return None
