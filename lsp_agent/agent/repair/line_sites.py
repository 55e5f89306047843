"""Which lines sampled line repairs try (agent/repair/line_repair.py), best first: Ochiai's ranking, its ties ordered by how
near the first failure's traceback a line is."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsp_agent.agent.repair.line_candidates import condition_header, repairable
from lsp_agent.agent.repair.upfront import frame_lines
from lsp_agent.tools.fault_lines import Spectra, SuspectLine, ranked_lines
from lsp_agent.tools.test_runs import named_source_files
from lsp_agent.workspace.python_parse import parse_python

if TYPE_CHECKING:
    from lsp_agent.tools.test_runs import TestReport
    from lsp_agent.workspace.overlay import Overlay


@dataclass
class SourceFile:
    """A file's lines with what its tokens and syntax tree say of them (nothing when it does not parse)."""

    lines: list[str]
    starts: dict[int, int]  # line number (1-based) -> the first line of the statement it belongs to
    functions: dict[tuple[int, int], list[int]]  # (first, last) line of each function -> its defaults' lines

    @classmethod
    def parse(cls, text: str) -> SourceFile:
        lines = text.splitlines()
        try:
            tree = parse_python(text)
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (SyntaxError, ValueError, tokenize.TokenError):
            return cls(lines, {}, {})
        starts: dict[int, int] = {}
        first = None
        for token in tokens:
            if token.type in (tokenize.NL, tokenize.COMMENT) and first is None:
                continue
            if first is None and token.type not in (tokenize.INDENT, tokenize.DEDENT):
                first = token.start[0]
            if token.type == tokenize.NEWLINE and first is not None:
                starts.update((n, first) for n in range(first, token.end[0] + 1))
                first = None
        functions = {
            (node.lineno, node.end_lineno or node.lineno): sorted(
                {value.lineno for value in [*node.args.defaults, *node.args.kw_defaults] if value is not None}
            )
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        return cls(lines, starts, functions)

    def statement_start(self, number: int) -> int:
        """The first line of the statement line `number` belongs to (itself when unknown)."""
        return self.starts.get(number, number)

    def statement_lines(self, number: int, pointed: list[int]) -> list[int]:
        """The physical lines of the statement holding line `number` worth a request each: those a traceback
        points at (`pointed`) and `number` itself first, then its first line, then its other continuation lines (at
        most MAX_CONTINUATION in all, and not those of closing brackets only); [number] for a one-line
        statement."""
        start = self.statement_start(number)
        lines = [n for n, first in self.starts.items() if first == start]
        if len(lines) < 2:
            return [number]
        rest = [n for n in lines if n != start and _bearing(self.lines[n - 1])]
        first = [n for n in rest if n in pointed or n == number]  # the traceback's and the ranked line itself
        ordered = first + [start] + [n for n in rest if n not in first]
        return ordered[: max(MAX_CONTINUATION, len(first)) + 1]

    def function_of(self, number: int) -> tuple[int, int] | None:
        """The innermost function holding line `number`, as (first, last) line."""
        spans = [span for span in self.functions if span[0] <= number <= span[1]]
        return min(spans, key=lambda span: span[1] - span[0]) if spans else None


LOOP_STEPS = 2  # steps a second request about a line leaves to the tool loop
MAX_CONTINUATION = (
    3  # continuation lines of one statement tried (a long call's wrong argument is in one of them)
)


def _bearing(line: str) -> bool:
    """Whether a continuation line holds code of its own, not just closing brackets and punctuation."""
    return any(c.isalnum() for c in line.split("#", 1)[0])


def site_budget(repair_lines: int, max_iterations: int) -> int:
    """How many lines line repairs ask about: `repairLines`, at most two thirds of the run's steps."""
    return min(repair_lines, max_iterations * 2 // 3)


def second_requests(repair_lines: int, max_iterations: int, sites: int) -> int:
    """How many of the best `sites` get a second request: the requests `repairLines` has left after one per line,
    as long as the tool loop keeps LOOP_STEPS of the run's steps."""
    return max(0, min(repair_lines - sites, sites, max_iterations - sites - LOOP_STEPS))


def repair_sites(task: str, overlay: Overlay, report: TestReport, budget: int) -> list[SuspectLine]:
    """The `budget` lines to try first, best first.

    The failing tests' lines of the task's source files (else of any non-test file) by Ochiai; among lines that tie,
    first those the first failure's traceback passes through, then the rest of those frames' functions, each group in
    line order. Not headers, imports or decorators. A statement spanning several lines stands for each of its
    physical lines (spectra mostly know only its first): the line the traceback points at inside it first, then its
    first line, then the other continuation lines, so a wrong argument of a multi-line call gets a request of its
    own; a continuation line some test ran unlike its first line is a site of its own. Each is followed by the
    condition its block runs under (a dropped or inverted condition ranks below the body it lets run) and, the first
    time its function comes up, by the lines of the function's default values (evaluated once, at definition, so no
    test's spectra single them out).
    """
    spectra = report.spectra
    assert spectra is not None
    named = named_source_files(task, overlay.is_file)
    ranked = ranked_lines(spectra, named) or ranked_lines(spectra, [])
    files = _Files(overlay, spectra, frame_lines(report.first_failure, named))
    ranked.sort(key=lambda s: (-round(s.score, 9), s.passed, files.nearness(s)))
    sites: list[SuspectLine] = []
    tried: set[tuple[str, int]] = set()
    seen_functions: set[tuple[str, tuple[int, int]]] = set()
    for site in ranked:
        code = files.source(site.path)
        header = condition_header(code.lines, code.statement_start(site.line))
        lines = [n for n in (site.line, header) if n and 0 < n <= len(code.lines)]
        starts = [n for n in lines if repairable(code.lines[code.statement_start(n) - 1])]
        chosen = [physical for n in starts for physical in files.statement(site.path, n)]
        function = code.function_of(site.line)
        if function and (site.path, function) not in seen_functions:
            seen_functions.add((site.path, function))
            chosen += code.functions[function]  # a wrong default value: the first time its function comes up
        for line in chosen:
            if (site.path, line) not in tried and len(sites) < budget:
                tried.add((site.path, line))
                sites.append(replace(site, line=line))
        if len(sites) >= budget:
            break
    return sites


class _Files:
    """The source files the ranked lines are in (parsed once each), with the spectra and the traceback's lines."""

    def __init__(self, overlay: Overlay, spectra: Spectra, frames: dict[str, list[int]]) -> None:
        self.overlay, self.spectra, self.frames = overlay, spectra, frames
        self.parsed: dict[str, SourceFile] = {}

    def source(self, path: str) -> SourceFile:
        """The file as the run sees it, parsed."""
        if path not in self.parsed:
            self.parsed[path] = SourceFile.parse(_text_of(self.overlay, path))
        return self.parsed[path]

    def nearness(self, site: SuspectLine) -> int:
        """0: a traceback line (or in its statement); 1: in a function the traceback passes through; 2: elsewhere."""
        lines, code = self.frames.get(site.path, []), self.source(site.path)
        start = code.statement_start(site.line)
        if any(code.statement_start(line) == start for line in lines):
            return 0
        function = code.function_of(site.line)
        return 1 if function and any(function[0] <= line <= function[1] for line in lines) else 2

    def statement(self, path: str, line: int) -> list[int]:
        """The lines a ranked line stands for: its statement's, unless it is a continuation line some test ran
        unlike the statement's first line (then itself)."""
        code = self.source(path)
        start, counts = code.statement_start(line), self.spectra.lines.get(path, {})
        if start != line and start in counts and counts[start] != counts.get(line):
            return [line]
        return code.statement_lines(line, self.frames.get(path, []))


def _text_of(overlay: Overlay, path: str) -> str:
    """A file's text as the run sees it, or '' when it cannot be read."""
    try:
        return overlay.read_text(path)
    except (OSError, ValueError):
        return ""
