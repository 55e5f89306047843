"""Context gathered before the first model call: the named tests' failures and the code most likely at fault.

A small model spends most of its steps finding its way; handing it the failing test's report and the top chunks
from the index (the files the task names first) in the first message lets it start with the edit.
Everything here is bounded in characters, and running the tests goes through the permission gate.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_agent.index.chunking import analyze
from lsp_agent.index.locate import file_kind
from lsp_agent.index.models import SearchHit
from lsp_agent.tools.fault_lines import SuspectLine, describe_suspects, suspicious_lines
from lsp_agent.tools.lenient_edit import SHOWN_CODE
from lsp_agent.tools.test_runs import TestReport, named_source_files, run_pytest

if TYPE_CHECKING:
    from lsp_agent.tools.registry import ToolContext

log = logging.getLogger(__name__)

MAX_CHUNK_LINES = 60
# a traceback line inside the project: "pkg/mod.py:12: in func"
_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): in ", re.M)


@dataclass
class Budget:
    """How much up-front context a profile affords (characters of code, number of chunks)."""

    code_chars: int
    chunks: int


def code_chunks(
    ctx: ToolContext,
    query: str,
    named: list[str],
    budget: Budget,
    frames: dict[str, list[int]] | None = None,
    suspect: SuspectLine | None = None,
) -> list[SearchHit]:
    """The best non-test chunks for `query` within budget: chunks a traceback passes through first (deepest
    frame first), then those in the files the task names, then the rest; the chunk holding the `suspect` line
    goes first when that order leaves it out."""
    if ctx.index is None:
        return []
    try:
        hits = ctx.index.search(query, top_k=20, overrides=ctx.overlay.overrides())
    except Exception as exc:  # noqa: BLE001 - retrieval is a help, never a failure
        log.info("up-front retrieval skipped: %s", exc)
        return []
    code = [h for h in hits if file_kind(h.path) == "code"]
    frames = frames or {}

    def rank(hit: SearchHit) -> tuple[int, int]:
        lines = frames.get(hit.path, [])
        depth = max((i for i, n in enumerate(lines) if hit.start <= n <= hit.end), default=-1)
        return (0, -depth) if depth >= 0 else (1 if hit.path in named else 2, 0)

    ordered = sorted(code, key=rank)  # stable: the index's order within each group
    chosen = _within_budget(ordered, budget)
    if suspect is None or any(c.path == suspect.path and c.start <= suspect.line <= c.end for c in chosen):
        return chosen
    held = chunk_holding(ctx, suspect)  # not among the best chunks: it goes first (overlapping ones drop out)
    return _within_budget([held, *ordered], budget) if held is not None else chosen


def _within_budget(ordered: list[SearchHit], budget: Budget) -> list[SearchHit]:
    """The first chunks of `ordered` that fit the budget, none overlapping another (the first always fits)."""
    chosen: list[SearchHit] = []
    used = 0
    for hit in ordered:
        if len(chosen) >= budget.chunks:
            break
        if any(c.path == hit.path and c.start <= hit.end and hit.start <= c.end for c in chosen):
            continue
        size = len(hit.text)
        if chosen and used + size > budget.code_chars:
            continue
        chosen.append(hit)
        used += size
    return chosen


def pointing(suspect: SuspectLine) -> str:
    """A sentence before the closing request naming the most suspicious line (the fault lines' first)."""
    return (
        f"The most suspicious line is {suspect.path} line {suspect.line}: the bug is likely on or near it. "
    )


def chunk_holding(ctx: ToolContext, suspect: SuspectLine) -> SearchHit | None:
    """The smallest chunk of the suspect's file (as the index would cut its current content) holding its line."""
    try:
        text = ctx.overlay.read_text(suspect.path)
        chunks = analyze(suspect.path, text).chunks
    except Exception as exc:  # noqa: BLE001 - the file vanished or does not parse: no preferred chunk
        log.info("no chunk for %s:%s: %s", suspect.path, suspect.line, exc)
        return None
    holding = [c for c in chunks if c.start <= suspect.line <= c.end]
    if not holding:
        return None
    best = min(holding, key=lambda c: c.end - c.start)
    return SearchHit(suspect.path, best.start, best.end, best.symbol, best.kind, 1.0, best.text)


def frame_lines(text: str, named: list[str]) -> dict[str, list[int]]:
    """Lines of the named source files that a traceback in `text` passes through."""
    frames: dict[str, list[int]] = {}
    for path, line in _FRAME.findall(text):
        for name in named:
            if path == name or path.endswith("/" + name) or name.endswith("/" + path):
                frames.setdefault(name, []).append(int(line))
    return frames


def numbered(hit: SearchHit, ctx: ToolContext, focus: list[int]) -> str:
    """A chunk as read_file shows it ('N: text'), at most MAX_CHUNK_LINES lines around a focus line."""
    try:
        lines = ctx.overlay.read_text(hit.path).splitlines()[hit.start - 1 : hit.end]
    except Exception:  # noqa: BLE001 - the file changed under us: show the indexed text
        lines = hit.text.splitlines()
    start = hit.start
    if len(lines) > MAX_CHUNK_LINES:
        inside = [f for f in focus if hit.start <= f <= hit.end]
        centre = inside[-1] if inside else hit.start
        offset = max(0, min(centre - start - MAX_CHUNK_LINES // 2, len(lines) - MAX_CHUNK_LINES))
        lines, start = lines[offset : offset + MAX_CHUNK_LINES], start + offset
    body = "\n".join(_without_docstrings([(start + i, line) for i, line in enumerate(lines)]))
    title = f"{hit.path} lines {start}-{start + len(lines) - 1}" + (f" ({hit.symbol})" if hit.symbol else "")
    return f"{title}:\n{body}"


def _focus(hit: SearchHit, frames: dict[str, list[int]], suspect: SuspectLine | None) -> list[int]:
    """The lines a long chunk is cut around: its traceback frames, then the most suspicious line (centred)."""
    lines = list(frames.get(hit.path, []))
    if suspect is not None and suspect.path == hit.path:
        lines.append(suspect.line)
    return lines


def _without_docstrings(lines: list[tuple[int, str]]) -> list[str]:
    """Numbered lines with each docstring of more than two lines shown as its first line and a marker."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        number, text = lines[i]
        stripped = text.strip()
        quote = stripped[:3] if stripped[:3] in ('"""', "'''") else ""
        closed = quote and (len(stripped) > 3 and stripped.endswith(quote) and len(stripped) >= 6)
        if quote and not closed:
            end = next((j for j in range(i + 1, len(lines)) if quote in lines[j][1]), None)
            if end is not None and end - i >= 2:
                out.append(f"{number}: {text}")
                out.append(f"{number + 1}-{lines[end][0]}: [docstring, {end - i} more lines]")
                i = end + 1
                continue
        out.append(f"{number}: {text}")
        i += 1
    return out


async def failing_tests(run: Any, targets: list[str]) -> TestReport | None:
    """Run the tests the task names (if the exec permission allows) and return their report."""
    decision = await run.tools.gate.check("run_tests", "exec", {"args": list(targets)})
    run.events.emit(
        "permission",
        tool="run_tests",
        decision="allowed" if decision.allowed else "denied",
        source=decision.source,
        answer=decision.answer,
        reason="exec",
    )
    if not decision.allowed:
        return None
    call_id, arguments = "upfront-tests", {"args": list(targets)}
    run.events.emit("tool_call", id=call_id, name="run_tests", arguments=arguments, iteration=0)
    started = time.perf_counter()
    report = await asyncio.to_thread(run_pytest, run.ctx, list(targets), spectra=True)
    output = report.details()
    run.events.emit(
        "tool_result",
        detail={"output": output, "arguments": arguments},
        id=call_id,
        name="run_tests",
        ok=True,
        output=output,
        seconds=round(time.perf_counter() - started, 4),
    )
    return report


async def upfront_message(
    run: Any, task_text: str, budget: Budget, report: TestReport | None, closing: str = ""
) -> str:
    """The first user message: the task, the named tests' report (when they were run), the relevant code, and
    `closing` (else a note to use what is shown)."""
    ctx: ToolContext = run.ctx
    named = named_source_files(run.task, ctx.overlay.is_file)
    parts = [task_text]
    query = run.task
    suspects: list[SuspectLine] = []
    if report is not None:
        state = "pass" if report.passed else "fail"
        parts.append(f"I ran the tests the task names; they {state} now:\n{report.details()}")
        query += "\n" + report.first_failure
        suspects = suspicious_lines(report.spectra) if report.spectra and not report.passed else []
        listed = describe_suspects(suspects, lambda path: ctx.overlay.read_text(path).splitlines())
        if listed:
            parts.append(listed)
    frames = frame_lines(report.first_failure if report else "", named)
    top = suspects[0] if suspects else None
    hits = await asyncio.to_thread(code_chunks, ctx, query, named, budget, frames, top)
    if hits:
        for hit in hits:  # an edit whose old text matches several places picks the one the model saw
            ctx.extras.setdefault(SHOWN_CODE, {}).setdefault(hit.path, []).append((hit.start, hit.end))
        shown = "\n\n".join(numbered(h, ctx, _focus(h, frames, top)) for h in hits)
        parts.append("Code that looks relevant (current content, numbered lines):\n" + shown)
    if closing:
        parts.append(pointing(top) + closing if top is not None else closing)
    elif report is not None or hits:
        parts.append("Use this to make the fix; read more of a file only if you need to.")
    return "\n\n".join(parts)
