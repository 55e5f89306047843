"""The small profile's repair loop: plain-text edits, each tested at once, the run ending when the tests pass.

A 1.5B model cannot plan a long tool session, but it can propose a fix when it sees the failing test and the code
(both up front). So in prompt mode an edit is a SEARCH/REPLACE block (no JSON escaping; the reply stops at its end),
each edit runs the tests the task names against the proposal (tools/tested_edit.py), an edit that does not help is
undone and its failure is the next observation, and once the tests pass the run finishes with that proposal.
A reply that writes the shown numbered lines back with some changed is read as an edit too (agent/repair/listing_edits.py).
After a failed attempt (an edit undone or refused, a reply that had to be corrected) the next replies are sampled
warmer and earlier failed attempts leave the conversation, so the model does not repeat or argue from them; a plain
answer while the tests fail (nothing changed, or still failing with the edits kept as progress) or an empty finish
is refused up to REFUSALS times.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.model.parsing import ACTION_STOP_SEQUENCES, BLOCK_STOP_SEQUENCE
from lsp_agent.agent.repair.line_simpler import make_passing_edits_simplest
from lsp_agent.agent.repair.listing_edits import listing_edit
from lsp_agent.tools.lenient_edit import proposal_text
from lsp_agent.tools.test_runs import named_source_files
from lsp_agent.tools.tested_edit import EditTesting, make_edits_tested, standing
from lsp_agent.tools.tested_edit_scope import asks_for_test_changes
from lsp_agent.tools.verify import fingerprint

if TYPE_CHECKING:
    from lsp_agent.agent.model.client import ModelClient
    from lsp_agent.agent.model.parsing import ToolCall
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.tools.verify import PermissionCheck, Verification

log = logging.getLogger(__name__)

RETRY_TEMPERATURES = (0.7, 1.0)  # after the first and the later failed edits
# answers (nothing changed, or the tests still failing with it) or finishes with nothing changed refused while the
# tests fail, before one ends the run
REFUSALS = 5
NO_EDIT_YET = "Your reply has no edit and no ACTION, and the tests the task names still fail ({tests})."
NO_FIX_YET = (
    "Your reply has no edit and no ACTION, and the tests the task names still fail with the changes so far "
    "({tests})."
)
EDIT_PLEASE = (
    " Reply with a THOUGHT, the file's path and one SEARCH/REPLACE block as in the example, "
    "or with one ACTION."
)


def install_repair_loop(
    run: Any,
    client: ModelClient | None,
    allowed: PermissionCheck | None,
    targets: list[str],
    verification: Verification | None,
) -> EditTesting | None:
    """Edit blocks' stop sequence for a small-profile run, and (when `allowed` is given and the task names tests
    `targets`) tested edits; returns the tested edits' state (the small profile ends the run on passing tests), or
    None."""
    if client is not None:
        client.stop_sequences = (*ACTION_STOP_SEQUENCES, BLOCK_STOP_SEQUENCE)
    if allowed is None or not targets:
        return None
    testing = EditTesting(
        targets,
        allowed,
        candidates=named_source_files(run.task, run.ctx.overlay.is_file),
        tests_editable=asks_for_test_changes(run.task),
    )
    if client is not None and "temperature" not in client.extra_params:
        testing.on_failure = lambda failures: _warmer(client, failures)
    if not make_edits_tested(run.registry, testing):
        return None
    make_passing_edits_simplest(run.registry, testing)
    if verification is not None:
        verification.refusal_limit = REFUSALS
    return testing


def note_first_report(
    report: TestReport | None, testing: EditTesting | None, verification: Verification | None
) -> None:
    """What the tests showed before any edit: the baseline for tested edits and the reason to refuse a bare finish."""
    if report is None or report.passed:
        return
    if testing is not None:
        testing.baseline = standing(report)
    if verification is not None:
        verification.failing_at_start = report.short()


class Forgetting:
    """After a failed edit, the conversation keeps its opening (system prompt, example, task: the server's cached
    prefix) and only the latest attempt with its result: earlier failed attempts, which a small model otherwise
    repeats or argues from, are dropped, and the prompt stays short."""

    def __init__(self, run: Any, testing: EditTesting) -> None:
        self.run, self.testing, self.seen = run, testing, 0

    def __call__(self, messages: list[dict[str, Any]]) -> None:
        """Drop the exchanges between the task and this step's reply when this step's attempt failed."""
        if self.testing.failures == self.seen:
            return
        self.seen = self.testing.failures
        opening = 2 + len(self.run.conversation.examples)
        if len(messages) > opening + 1 and messages[opening - 1].get("role") == "user":
            del messages[opening:-1]
            self.run.transcript.reset()  # not append-only any more: the next request is recorded whole


def listing_edit_of(run: Any, text: str, candidates: list[str]) -> ToolCall | None:
    """The edit a reply of changed numbered lines makes (prompt mode), against the files it names or the task's."""
    if run.conversation.tool_mode != "prompt":
        return None
    return listing_edit(text, lambda path: proposal_text(run.ctx, path), candidates)


def refusal(run: Any, testing: EditTesting, verification: Verification | None) -> str | None:
    """Why a plain-text answer cannot end the run: the named tests failed up front and nothing is changed, or they
    still fail with the proposal kept as progress (said up to REFUSALS times per run, shared with task_complete's
    refusal); None otherwise."""
    if verification is None:
        return None
    if not run.ctx.overlay.changed_paths():
        reason = NO_EDIT_YET.format(tests=verification.failing_at_start)
    elif testing.kept is not None and testing.kept[0] == fingerprint(run.ctx):
        reason = NO_FIX_YET.format(tests=testing.kept[1])
    else:
        return None  # changed since the tests last ran (or never tested): task_complete tests it
    return reason + EDIT_PLEASE if verification.refuse_unchanged() else None


def _warmer(client: ModelClient, failures: int) -> None:
    """Sample the next replies warmer and with another seed (a server with a fixed seed would otherwise give the
    same reply to the same prompt): a different fix, not the failed one again."""
    temperature = RETRY_TEMPERATURES[min(failures, len(RETRY_TEMPERATURES)) - 1]
    client.extra_params.update(temperature=temperature, seed=failures)
    log.info("%d edit(s) failed: sampling at temperature %s, seed %d", failures, temperature, failures)


def summary(run: Any, testing: EditTesting) -> str:
    """The answer of a run that ends because its edit made the named tests pass."""
    changed = ", ".join(run.ctx.overlay.changed_paths())
    said = (run.last_text or "").strip()
    head = said if said else f"Changed {changed}."
    note = f"{testing.note}\n\n" if testing.note else ""
    if testing.alternatives:  # the front-ends get the versions themselves too (the editor offers them)
        run.events.emit("context", what="alternatives", **testing.alternatives)
        testing.alternatives = {}
    return f"{head}\n\n{note}Tests pass: {testing.passed_report}. {testing.passed_suite}".rstrip()
