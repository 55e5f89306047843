"""Sampled line repairs (small profile): before the tool loop, the model writes corrected versions of the lines the
failing tests point at, and each version is tested at once.

Agentless-style repair for a model too small to find its way in a tool loop. Fault localization ranks the lines of
the task's source files (tools/fault_lines.py, from the up-front test run), each followed by the condition its block
runs under; for each of the best few, one short request (a conversation of its own: the task, the first failure, the
code around the line) asks for a few corrected versions of that line, sampled warm (a greedy reply mostly repeats
the line). Each version that parses goes through the tested edit_file (tools/tested_edit.py): the permission gate,
then the named tests. Once a version passes (the named tests and the whole suite), the reply's other versions are
tested too, and the simpler versions between the line and a passing one (agent/repair/line_alternatives.py), with no more
requests; the run ends proposing the passing version that changes the fewest tokens (among as small ones, the one the code
model finds likeliest in the line's place: agent/repair/line_likelihood.py), its summary naming the others when
several pass. Every tested version is undone meanwhile (even one that helps: the loop's first message shows
the code as it was). A version the named tests pass with while
the whole suite still fails tests that may share the bug (tools/suite_check.py's `unfinished`) is a partial fix: it is
undone too and the search goes on, up to EXTRA_SITES more lines, for a version that fixes those as well; failing that,
the run ends with the partial fix that left the fewest, its checks failed (status `checks_failed`, naming the tests
still failing), never as a plain success.
With an infill template (`infillTemplate`; `auto` picks one for a code model it knows by name), the first request
about each line is a fill-in-the-middle completion instead (agent/repair/line_infill.py): the model writes the line in its
place without seeing it; a server without text completions turns that off for the rest of the run. With infill, code
is added too (agent/repair/line_insertions.py), in up to `repairAdditions` requests beyond `repairLines` while the loop
keeps a few steps, then in place of requests about lines again: a best line's condition extended by a dropped part, a
missing line inserted at the end or start of the best line's function or after the line, all after the lines are
filled in; but when the failure shows a None where a value was wanted, a line is first inserted where the best lines'
functions (or one the failure names) fall off their end, and what the code itself shows is missing or misread goes
first of all (agent/repair/line_evidence.py). The order is agent/repair/line_schedule.py's.
Each request is a step of max_iterations. One line gets one request, and at most two thirds of the steps go to
different lines; requests `repairLines` has left then go to the best-ranked lines again (a line request, without the
versions already tried), as long as the loop keeps a few steps. The loop, which starts as before, refuses the
versions tried here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.model.errors import ModelError
from lsp_agent.agent.model.parsing import ToolCall
from lsp_agent.agent.outcome import Outcome
from lsp_agent.agent.repair.line_alternatives import (
    MAX_SIMPLER,
    alternatives_note,
    ranked,
    simpler_versions,
    token_distance,
)
from lsp_agent.agent.repair.line_candidates import candidate_lines, line_request, shown_numbers
from lsp_agent.agent.repair.line_infill import MAX_TOKENS as INFILL_TOKENS
from lsp_agent.agent.repair.line_infill import STOP, filled_line, infill_prompt, template_for
from lsp_agent.agent.repair.line_insertions import (
    extended_version,
    extension_prompt,
    inserted_version,
    insertion_prompt,
)
from lsp_agent.agent.repair.line_likelihood import likelihoods
from lsp_agent.agent.repair.line_schedule import EXTEND, INFILL, INSERT, LINE, request_schedule
from lsp_agent.tools.syntax_check import introduced_errors

if TYPE_CHECKING:
    from lsp_agent.agent.repair.repetition import RepeatTracker
    from lsp_agent.tools.fault_lines import SuspectLine
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.tools.tested_edit import EditTesting

log = logging.getLogger(__name__)

TEMPERATURE = 0.8  # unless the user set one
REPLY_TOKENS = 240
SYSTEM = "You fix bugs in Python code. Answer with lines of code only."
MAX_CONTEXT_LINES = 3  # neighbouring lines added (each side) until the edited text occurs once in its file
EXTRA_SITES = 3  # lines still tried after the first partial fix


async def repair_lines(
    run: Any, testing: EditTesting, report: TestReport | None, repeats: RepeatTracker | None = None
) -> Outcome | None:
    """Try sampled versions of the best-ranked lines, starting from the named tests' `report`; the outcome once
    they pass, else None (the loop goes on from where the tests stand; `repeats` forgets the calls made here)."""
    if report is None or report.passed or report.spectra is None:
        return None
    settings = run.settings
    client = run.conversation.client
    infill = template_for(settings.infill_template, client.model)
    requests = _requests(run, report, infill)
    tried: dict[tuple[str, int], set[str]] = {}  # a line -> the versions of it tried so far
    saved, failures, baseline = dict(client.extra_params), testing.failures, testing.baseline
    best: _Passing | None = None
    testing.simplify = False  # simpler versions are tried here, among all the passing ones
    try:
        for index, (site, kind) in enumerate(requests):
            if best is not None and index > best.site + EXTRA_SITES:
                break
            run.check_stop()
            filling = kind != LINE
            client.extra_params.update(max_tokens=INFILL_TOKENS if filling else REPLY_TOKENS)
            if "temperature" not in saved:  # an infill is greedy: the likeliest line; versions are sampled
                client.extra_params.update(
                    temperature=0 if filling else TEMPERATURE, seed=run.steps_spent + 1
                )
            lines = run.ctx.overlay.read_text(site.path).splitlines()
            done = tried.setdefault((site.path, site.line), set())
            template = infill if filling else None
            versions = await _versions(run, report, site, lines, done, template, kind)
            if versions is None:  # the server has no text completions: line requests from here on
                infill = None  # and no scoring either
                later = [(s, LINE) for s, k in requests[index + 1 :] if k in (INFILL, LINE)]
                requests[index + 1 :] = later
                retry = kind == INFILL  # an addition has no line request of its own
                versions = await _versions(run, report, site, lines, done, None, LINE) if retry else []
            done.update(versions)
            passing: list[_Passing] = []  # the versions that clear the suite (a fix each)
            best = await _try_versions(run, testing, site, lines, versions, index, best, passing)
            if passing:
                passing += await _simpler(run, testing, site, lines, passing, index, done)
                return await _finish_fix(run, testing, passing, infill)
        if best is not None:
            return _finish_partial(run, testing, best)
    except _Refused:
        log.info("sampled line repairs stopped: running the tests was not permitted")
        return None
    finally:
        testing.simplify = True
        client.extra_params.clear()
        client.extra_params.update(saved)
        testing.failures, testing.baseline = failures, baseline  # the loop starts where the tests stood
        if repeats is not None:
            repeats.forget()  # the loop's model never saw these calls: its first is not a repeat
    log.info("sampled line repairs: none of %d request(s) fixed it", len(requests))
    return None


class _Refused(Exception):
    """A version's test run was not permitted: the repairs stop (the loop goes on, its edits untested too)."""


@dataclass
class _Passing:
    """A version the named tests pass with: a fix when `failing` is 0, else a partial fix (the whole suite still
    fails tests that may share the bug), the run's answer when no version does better."""

    site: int  # index of its line among the sites
    path: str
    line: int
    original: str  # the line as it was
    version: str  # the line's version
    text: str  # the file with the version
    failing: int  # tests the whole suite still fails that may share the bug
    passed: tuple[str | None, str, str]  # the tested edits' passed, passed_report and passed_suite with it
    unfinished: str = ""  # a partial fix's report naming the tests still failing

    @property
    def change(self) -> str:
        """What the version changes, said when the run ends with it."""
        if "\n" in self.version:  # an insertion: the line, then the new lines
            added = "; ".join(line.strip() for line in self.version.splitlines()[1:])
            return (
                f"{self.path} after line {self.line} (`{self.original.strip()}`), a line is added: `{added}`."
            )
        return f"{self.path} line {self.line}: `{self.original.strip()}` is now `{self.version.strip()}`."


def _finish_partial(run: Any, testing: EditTesting, partial: _Passing) -> Outcome:
    """End the run with the partial fix that left the fewest failing tests (no version cleared the suite)."""
    _adopt(run, testing, partial)
    run.thought(f"{partial.change} No version tried made the whole suite pass: {partial.unfinished}.")
    return Outcome(
        "complete", run.profile.finished_answer(run) or run.last_text, True
    )  # its checks failed: testing.kept


async def _finish_fix(
    run: Any, testing: EditTesting, passing: list[_Passing], template: str | None
) -> Outcome:
    """End the run with the passing version that changes the line least (of those as small, the one the model
    finds likeliest, when it can say: `template` set and log-probabilities sent; only those are scored, each
    score a costly request); the summary names the others."""
    by_version = {fix.version: fix for fix in passing}  # in the order found: ties keep it without scores
    first = passing[0]
    versions = ranked(first.original, list(by_version))
    smallest = token_distance(first.original, versions[0])
    tied = [version for version in versions if token_distance(first.original, version) == smallest]
    scores: dict[str, float] = {}
    if len(tied) > 1 and template is not None:  # a score decides only among versions as small
        lines = run.ctx.overlay.read_text(first.path).splitlines()  # as it was: each tried version was undone
        scores = await likelihoods(run, template, lines, first.line, tied)
        versions = ranked(first.original, versions, scores)
    chosen = by_version[versions[0]]
    _adopt(run, testing, chosen)
    note = alternatives_note(chosen.original, versions, scores)
    run.thought(f"{chosen.change} {note}".strip())
    if note:  # the front-ends get the versions themselves too
        where = {"path": chosen.path, "line": chosen.line}
        likelihood = {"likelihood": [scores.get(v) for v in versions]} if scores else {}
        run.events.emit("context", what="alternatives", status=note, versions=versions, **where, **likelihood)
    return Outcome("complete", run.profile.finished_answer(run) or run.last_text, True)


def _adopt(run: Any, testing: EditTesting, fix: _Passing) -> None:
    """Make `fix` the proposal, with the test results it passed with."""
    run.ctx.overlay.write_text(fix.path, fix.text)
    testing.passed, testing.passed_report, testing.passed_suite = fix.passed
    testing.suite_failing = fix.failing
    if fix.failing:  # the run ends with its checks failed, naming the tests still failing
        testing.kept = (fix.passed[0] or "", fix.unfinished)


def _requests(run: Any, report: TestReport, infill: str | None) -> list[tuple[SuspectLine, str]]:
    """The requests line repairs make, in order (line_schedule.request_schedule, the one schedule)."""
    settings = run.settings
    return request_schedule(
        run.task,
        run.ctx.overlay,
        report,
        settings.repair_lines,
        settings.max_iterations,
        infill is not None,
        settings.repair_additions,
    )


async def _versions(
    run: Any,
    report: TestReport,
    site: SuspectLine,
    lines: list[str],
    tried: set[str],
    template: str | None,
    kind: str = LINE,
) -> list[str] | None:
    """The new versions of the site's line that one request brings: the line the model fills in (`template` set),
    the line with code added (an insertion after it, its condition extended), else the line request's versions;
    None when the infill request failed (the server cannot fill in)."""
    step = run.spend_step()
    original = lines[site.line - 1]
    if template is not None:
        prompts = {
            INFILL: lambda: infill_prompt(template, lines, site.line),
            INSERT: lambda: insertion_prompt(template, lines, site.line),
            EXTEND: lambda: extension_prompt(template, lines, site.line),
        }
        try:
            reply = await run.conversation.infill(prompts[kind]() or "", STOP, step=step)
        except ModelError as error:
            log.warning("fill-in-the-middle failed (%s): line repairs go on with line requests", error)
            return None
        if kind != INFILL:
            added = (inserted_version if kind == INSERT else _extended)(reply.content, lines, site.line)
            return [added] if added is not None and added not in tried else []
        return candidate_lines(filled_line(reply.content), original, tried)
    messages = run.conversation.open(
        line_request(run.task, report.first_failure, site.path, lines, site.line), system=SYSTEM
    )
    reply = await run.conversation.complete(messages, None, step=step)
    echoes = [lines[n - 1] for n in shown_numbers(lines, site.line) if n != site.line]
    return candidate_lines(reply.content, original, [*echoes, *tried])


async def _try_versions(
    run: Any,
    testing: EditTesting,
    site: SuspectLine,
    lines: list[str],
    versions: list[str],
    index: int,
    best: _Passing | None,
    passing: list[_Passing],
) -> _Passing | None:
    """Each version of the site's line (the `index`th request) tried as a tested edit, every one of them even after
    one passes (no more requests: the reply is here); those that clear the suite go to `passing`. Returns the best
    partial fix so far (`best`, or one of these with fewer failing tests elsewhere)."""
    for number, version in enumerate(versions, 1):
        found = await _try_version(run, testing, site, lines, version, index, number)
        if found is None:
            continue
        if not found.failing:
            passing.append(found)
        elif best is None or found.failing < best.failing:
            best = found
    return best


async def _try_version(
    run: Any, testing: EditTesting, site: SuspectLine, lines: list[str], version: str, index: int, number: int
) -> _Passing | None:
    """One version of the site's line as a tested edit: what it passes with (the file is put back either way: the
    run ends with the version chosen among those that pass), or None when the named tests fail with it."""
    edit = unique_edit(lines, site.line, version)
    before, untested = run.ctx.overlay.read_text(site.path), testing.untested
    if edit is None or introduced_errors(site.path, before, _with_line(lines, site.line, version)):
        return None  # a version that breaks parsing (any language the index parses) costs no test run
    arguments = {"path": site.path, "old_text": edit[0], "new_text": edit[1]}
    call = ToolCall("edit_file", arguments, id=f"line-repair-{run.steps_spent}-{number}")
    await run.tools.execute(call)
    found = None
    if testing.verified(run.ctx):
        state = (testing.passed, testing.passed_report, testing.passed_suite)
        text = run.ctx.overlay.read_text(site.path)
        original = lines[site.line - 1]
        failing = testing.suite_failing
        unfinished = testing.kept[1] if failing and testing.kept is not None else ""
        found = _Passing(index, site.path, site.line, original, version, text, failing, state, unfinished)
    # partial, kept as progress or untested: the loop's first message shows the code as it was, so it stays so
    if run.ctx.overlay.read_text(site.path) != before:
        run.ctx.overlay.write_text(site.path, before)
    if testing.untested > untested:
        raise _Refused
    return found


async def _simpler(
    run: Any,
    testing: EditTesting,
    site: SuspectLine,
    lines: list[str],
    passing: list[_Passing],
    index: int,
    tried: set[str],
) -> list[_Passing]:
    """The simpler versions between the line and the passing versions (part of a change only) that pass too, at
    most MAX_SIMPLER tried in all, none when a passing version already changes a single token."""
    found: list[_Passing] = []
    original = lines[site.line - 1]
    versions = ranked(original, [fix.version for fix in passing])
    if token_distance(original, versions[0]) <= 1:
        return found
    singles = [version for version in versions if "\n" not in version]  # not an insertion's lines
    candidates = [v for version in singles for v in simpler_versions(original, version) if v not in tried]
    for number, version in enumerate(list(dict.fromkeys(candidates))[:MAX_SIMPLER], 1):
        run.check_stop()
        tried.add(version)
        simpler = await _try_version(run, testing, site, lines, version, index, 100 + number)
        if simpler is not None and not simpler.failing:
            found.append(simpler)
    return found


def unique_edit(lines: list[str], number: int, version: str) -> tuple[str, str] | None:
    """(old_text, new_text) replacing line `number` (1-based) by `version`, with as few neighbouring lines as make
    old_text occur once in the file; None when even MAX_CONTEXT_LINES each side do not."""
    text = "\n".join(lines)
    spans = [(0, 0)] + [s for n in range(1, MAX_CONTEXT_LINES + 1) for s in ((n, 0), (0, n), (n, n))]
    for above, below in spans:  # lines above first, then below, then both
        first, last = max(0, number - 1 - above), min(len(lines), number + below)
        old = "\n".join(lines[first:last])
        if text.find(old) == text.rfind(old):  # once (overlapping matches count too)
            return old, "\n".join([*lines[first : number - 1], version, *lines[number:last]])
    return None


def _extended(reply: str, lines: list[str], number: int) -> str | None:
    """Line `number` with its condition extended by the part the model filled in."""
    return extended_version(reply, lines[number - 1])


def _with_line(lines: list[str], number: int, version: str) -> str:
    """The file's text with line `number` (1-based) replaced by `version`."""
    return "\n".join([*lines[: number - 1], version, *lines[number:]])
