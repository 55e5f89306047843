"""Model-chosen regular expressions that cannot freeze the server.

RE2 runs every pattern it supports in time linear in the text, so `(a+)+$` is as fast as `a+$`. What RE2 lacks
(lookarounds, backreferences, atomic groups) runs in the `regex` module, which releases the GIL while it matches
and stops at a deadline shared by the whole search. Literal searches use Python's `re` on an escaped pattern,
which never backtracks.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import re2
import regex

from lsp_agent.tools.registry import ToolError

FALLBACK_SECONDS = 2.0  # time limit of one search_text call on the backtracking engine
# Constructs whose meaning differs between one line and a whole file: no whole-file prefilter for these.
_LINE_ONLY = ("\\A", "\\Z", "\\z", "(?!", "(?<!")


def _re2_options(case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern on stderr
    options.case_sensitive = case_sensitive
    return options


@dataclass
class SearchPattern:
    """A compiled search_text pattern: line matching, an optional whole-file prefilter and the time limit."""

    pattern: str
    engine: str  # "literal" | "re2" | "backtracking"
    line: Any
    file: Any | None
    deadline: float | None = field(default=None)

    def search_line(self, text: str) -> Any:
        """The first match in one line, or None."""
        return self._run(self.line, text)

    def may_match_file(self, text: str) -> bool:
        """False only when no line of `text` can match (a quick whole-file test before splitting lines)."""
        if self.file is None:
            return True
        if "\r" in text:
            text = text.replace("\r\n", "\n")  # `$` of a multi-line pattern stops before LF only
        return self._run(self.file, text) is not None

    def _run(self, compiled: Any, text: str) -> Any:
        if self.engine != "backtracking":
            return compiled.search(text)
        if self.deadline is None:
            self.deadline = time.monotonic() + FALLBACK_SECONDS
        left = self.deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            return compiled.search(text, concurrent=True, timeout=left)
        except TimeoutError:
            raise ToolError(too_slow_message(self.pattern)) from None


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
        file = re2.compile("(?m)" + pattern, options) if whole_file else None
        return SearchPattern(pattern, "re2", line, file)
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


def compile_glob(regex_text: str) -> Any:
    """A full-match matcher for a regex made from a model's glob (RE2: linear in the path length)."""
    return re2.compile(regex_text, _re2_options(True))
