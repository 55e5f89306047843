"""Which lines sampled line repairs try (agent/line_repair.py), best first: Ochiai's ranking, its ties ordered by how
near the first failure's traceback a line is."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsp_agent.agent.line_candidates import condition_header, repairable
from lsp_agent.agent.upfront import frame_lines
from lsp_agent.tools.fault_lines import SuspectLine, ranked_lines
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

    def function_of(self, number: int) -> tuple[int, int] | None:
        """The innermost function holding line `number`, as (first, last) line."""
        spans = [span for span in self.functions if span[0] <= number <= span[1]]
        return min(spans, key=lambda span: span[1] - span[0]) if spans else None


LOOP_STEPS = 2  # steps a second request about a line leaves to the tool loop


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
    line order. Not headers, imports or decorators, nor a statement's continuation line that ran just like its first
    line. Each is followed by the condition its block runs under (a dropped or inverted condition ranks below the body
    it lets run) and, the first time its function comes up, by the lines of the function's default values (evaluated
    once, at definition, so no test's spectra single them out).
    """
    spectra = report.spectra
    assert spectra is not None
    named = named_source_files(task, overlay.is_file)
    ranked = ranked_lines(spectra, named) or ranked_lines(spectra, [])
    frames = frame_lines(report.first_failure, named)
    files: dict[str, SourceFile] = {}

    def source(path: str) -> SourceFile:
        if path not in files:
            files[path] = SourceFile.parse(_text_of(overlay, path))
        return files[path]

    def nearness(site: SuspectLine) -> int:
        """0: a traceback line; 1: in a function the traceback passes through; 2: elsewhere."""
        lines = frames.get(site.path, [])
        if site.line in lines:
            return 0
        function = source(site.path).function_of(site.line)
        return 1 if function and any(function[0] <= line <= function[1] for line in lines) else 2

    def same_as_start(path: str, line: int) -> bool:
        """Whether a statement's continuation line was run just like its first line (which stands for both)."""
        start = source(path).statement_start(line)
        counts = spectra.lines.get(path, {})
        return start != line and start in counts and counts[start] == counts.get(line)

    ranked.sort(key=lambda s: (-round(s.score, 9), s.passed, nearness(s)))
    sites: list[SuspectLine] = []
    tried: set[tuple[str, int]] = set()
    seen_functions: set[tuple[str, tuple[int, int]]] = set()
    for site in ranked:
        code = source(site.path)
        lines = [site.line, condition_header(code.lines, site.line)]
        chosen = [n for n in lines if n and 0 < n <= len(code.lines) and repairable(code.lines[n - 1])]
        chosen = [n for n in chosen if not same_as_start(site.path, n)]
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


def _text_of(overlay: Overlay, path: str) -> str:
    """A file's text as the run sees it, or '' when it cannot be read."""
    try:
        return overlay.read_text(path)
    except (OSError, ValueError):
        return ""
