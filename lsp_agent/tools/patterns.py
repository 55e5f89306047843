"""Model-chosen regular expressions that cannot freeze the server.

RE2 runs every pattern it supports in time linear in the text, so `(a+)+$` is as fast as `a+$`. What RE2 lacks
(lookarounds, backreferences, atomic groups) runs in the `regex` module, which releases the GIL while it matches
and stops once the search has spent FALLBACK_SECONDS matching (reading files does not count). Literal searches use Python's `re` on an escaped pattern,
which never backtracks.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import re2
import regex

from lsp_agent.tools.common import split_lines
from lsp_agent.tools.registry import ToolError

FALLBACK_SECONDS = 2.0  # time limit of one search_text call on the backtracking engine
# Constructs whose meaning differs between one line and a whole file: no whole-file prefilter for these.
_LINE_ONLY = ("\\A", "\\Z", "\\z", "(?!", "(?<!")


def _re2_options(case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern on stderr
    options.case_sensitive = case_sensitive
    return options


class Span:
    """Where a match lies in a line, in characters (what the snippet needs of a match)."""

    def __init__(self, start: int, end: int) -> None:
        self._start, self._end = start, end

    def start(self) -> int:
        """First character of the match."""
        return self._start

    def end(self) -> int:
        """One past its last character."""
        return self._end


@dataclass
class SearchPattern:
    """A compiled search_text pattern: line matching, an optional whole-file prefilter and the time limit."""

    pattern: str
    engine: str  # "literal" | "re2" | "backtracking"
    line: Any
    file: Any | None
    budget: float = field(default_factory=lambda: FALLBACK_SECONDS)  # matching time left (backtracking)
    line_bytes: Any | None = None  # RE2 on UTF-8 bytes: no per-call str conversion
    file_bytes: Any | None = None

    def search_line(self, text: str) -> Any:
        """The first match in one line, or None."""
        return self._run(self.line, text)

    def matching_lines(self, text: str) -> Iterator[tuple[int, str, Any]]:
        """(line number from 1, line, match) of each line of `text` that matches, as split_lines counts lines."""
        if "\r" in text:
            text = text.replace("\r\n", "\n")  # `$` of a multi-line pattern stops before LF only
        if self.file_bytes is not None:
            yield from self._jumping_lines(text)
            return
        if self.file is not None and self._run(self.file, text) is None:
            return
        for number, line in enumerate(split_lines(text), start=1):
            match = self._run(self.line, line)
            if match is not None:
                yield number, line, match

    def _jumping_lines(self, text: str) -> Iterator[tuple[int, str, Any]]:
        """RE2 over the whole file finds the next candidate line; only that line is matched on its own."""
        data = text.encode("utf-8", "surrogatepass")
        pos, number, counted = 0, 1, 0
        while pos < len(data):
            found = self.file_bytes.search(data, pos)
            if found is None:
                return
            begin = data.rfind(b"\n", 0, found.start()) + 1
            stop = data.find(b"\n", found.start())
            stop = len(data) if stop == -1 else stop
            number += data.count(b"\n", counted, begin)
            counted = begin
            line = data[begin:stop]
            match = self.line_bytes.search(line)
            if match is not None:
                decoded = line.decode("utf-8", "surrogatepass")
                first = len(line[: match.start()].decode("utf-8", "surrogatepass"))
                last = first + len(line[match.start() : match.end()].decode("utf-8", "surrogatepass"))
                yield number, decoded, Span(first, last)
            pos = stop + 1

    def _run(self, compiled: Any, text: str) -> Any:
        if self.engine != "backtracking":
            return compiled.search(text)
        if self.budget <= 0:
            raise ToolError(too_slow_message(self.pattern))
        started = time.monotonic()
        try:
            return compiled.search(text, concurrent=True, timeout=self.budget)
        except TimeoutError:
            self.budget = 0.0
            raise ToolError(too_slow_message(self.pattern)) from None
        finally:
            self.budget -= time.monotonic() - started


def compile_search(pattern: str, *, is_regex: bool, case_sensitive: bool) -> SearchPattern:
    """The engine for a search_text pattern; ToolError for an invalid regular expression."""
    if not is_regex:
        flags = 0 if case_sensitive else re.IGNORECASE
        literal = re.escape(pattern)
        return SearchPattern(
            pattern, "literal", re.compile(literal, flags), re.compile(literal, flags | re.MULTILINE)
        )
    whole_file = not any(tok in pattern for tok in _LINE_ONLY)
    try:
        options = _re2_options(case_sensitive)
        line = re2.compile(pattern, options)
        if not whole_file:
            return SearchPattern(pattern, "re2", line, None)
        raw = pattern.encode("utf-8", "surrogatepass")
        line_bytes, file_bytes = re2.compile(raw, options), re2.compile(b"(?m)" + raw, options)
        return SearchPattern(pattern, "re2", line, None, line_bytes=line_bytes, file_bytes=file_bytes)
    except re2.error:
        pass  # outside RE2's syntax: the backtracking engine, with a time limit
    flags = regex.VERSION0 | (0 if case_sensitive else regex.IGNORECASE)
    try:
        line = regex.compile(pattern, flags)
        file = regex.compile(pattern, flags | regex.MULTILINE) if whole_file else None
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ToolError(invalid_message(pattern, exc)) from None
    return SearchPattern(pattern, "backtracking", line, file)


def invalid_message(pattern: str, exc: BaseException) -> str:
    """Why a regular expression cannot be compiled, and what to do."""
    detail = getattr(exc, "msg", None) or str(exc)
    pos = getattr(exc, "pos", None)
    where = f" at position {pos}" if pos is not None else ""
    return (
        f"invalid regular expression {pattern!r}: {detail}{where}; fix it, or pass regex=false to search for "
        "the literal text"
    )


def too_slow_message(pattern: str) -> str:
    """The observation for a pattern that ran past the time limit."""
    return (
        f"the regular expression {pattern!r} was stopped after {FALLBACK_SECONDS:g} s: it uses lookarounds or "
        "backreferences, which need a backtracking engine, and it backtracks too much (nested quantifiers such "
        "as (a+)+ or (a|aa)* do that). Drop the lookaround or backreference so the linear-time engine can run "
        "it, remove the nested quantifier, or search for a literal part with regex=false."
    )


def compile_glob(regex_text: str, glob: str) -> Any:
    """A full-match matcher for the regex made from a model's `glob` (RE2: linear in the path length)."""
    try:
        return re2.compile(regex_text, _re2_options(True))
    except re2.error as exc:
        detail = (
            exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        )
        raise ToolError(f"invalid glob pattern {glob!r} ({detail}); try '**/*.py' or 'src/*'") from None
