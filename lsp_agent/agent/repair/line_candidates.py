"""Sampled line repairs, the text side: the request for corrected versions of one line, and the versions read back
from a small model's free-form reply (numbered lists, inline code, code fences, `N:` prefixes, "replace X with Y")."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from difflib import SequenceMatcher

from lsp_agent.workspace.python_parse import parse_python

VERSIONS = 5  # corrected versions asked for per request
MAX_CANDIDATES = 6  # versions tested per request, in reply order
MIN_LIKENESS = 0.3  # similarity to the original line below which a line of code is not a version of it
LINES_BEFORE, LINES_AFTER = 8, 4  # the code shown around the line
MAX_FAILURE_LINES = 14

_SKIPPED = re.compile(
    r"""^(async\s+def |def |class |@|import |from \S+ import |try:|else:|finally:|pass$|#|"{3}|'{3})"""
)
_CONDITION = re.compile(r"^(if|elif|while)\b")
_NUMBERING = re.compile(
    r"^(?:\d+[.):]|[-*•]|#+\s*\w+\s*\d*:?)\s+"
)  # "1. ", "2) ", "134: ", "- ", "### Version 1"
_SPAN = re.compile(r"`([^`\n]+)`")
_REPLACE = re.compile(r"(?:replace|change)\s+`([^`\n]+)`\s+(?:with|to|by)\s+`([^`\n]+)`", re.I)


def repairable(code: str) -> bool:
    """Whether a source line is worth asking fixes for: a statement, not a header, decorator, import or keyword."""
    stripped = code.strip()
    return bool(stripped) and not _SKIPPED.match(stripped)


def condition_header(lines: list[str], number: int) -> int | None:
    """The number of the `if`/`elif`/`while` line whose block holds line `number` (1-based), if that is its block."""
    if not 0 < number <= len(lines):
        return None
    depth = _depth(lines[number - 1])
    for above in range(number - 1, 0, -1):
        code = lines[above - 1]
        if code.strip() and not code.lstrip().startswith("#") and _depth(code) < depth:
            return above if _CONDITION.match(code.strip()) else None
    return None


def line_request(task: str, failure: str, path: str, lines: list[str], number: int) -> str:
    """The request for VERSIONS corrected versions of line `number` of `path` (1-based), with the code around it."""
    window = "\n".join(f"{n}: {lines[n - 1]}" for n in shown_numbers(lines, number))
    shown = "\n".join(failure.strip().splitlines()[:MAX_FAILURE_LINES])
    return (
        f"{task.strip()}\n\nThe failing test:\n{shown}\n\nThe code ({path}):\n{window}\n\n"
        f"Line {number} is likely wrong: `{lines[number - 1].strip()}`. Write {VERSIONS} different corrected "
        f"versions of line {number}, numbered 1-{VERSIONS}, each one full line of code, no explanations."
    )


def shown_numbers(lines: list[str], number: int) -> range:
    """The numbers (1-based) of the lines the request shows around line `number`."""
    return range(max(1, number - LINES_BEFORE), min(len(lines), number + LINES_AFTER) + 1)


def candidate_lines(reply: str, original: str, shown: Iterable[str] = ()) -> list[str]:
    """Distinct versions of `original` in the reply, indented like it, in reply order (at most MAX_CANDIDATES).

    Lines of the code shown around it (`shown`) that the reply echoes, as in a numbered listing, are not versions.
    """
    indent = original[: len(original) - len(original.lstrip())]
    seen = {_key(original), *(_key(line) for line in shown)}
    found: list[str] = []
    for piece in _pieces(reply, original):
        text = without_comment(piece.strip())
        if not text or _key(text) in seen:
            continue
        if not _is_code(text) or SequenceMatcher(None, text, original.strip()).ratio() < MIN_LIKENESS:
            continue
        seen.add(_key(text))
        found.append(indent + text)
    return found[:MAX_CANDIDATES]


def _pieces(reply: str, original: str) -> Iterator[str]:
    """Each reply line without list numbering or backticks, and the inline code spans of prose lines; "replace `X`
    with `Y`" gives the original line with X replaced."""
    for raw in reply.splitlines():
        line = _NUMBERING.sub("", raw.strip()).strip()
        if line.startswith("```"):
            continue
        replaced = [original.replace(old, new, 1) for old, new in _REPLACE.findall(line) if old in original]
        spans = _SPAN.findall(line)
        if replaced:
            yield from replaced
        elif spans and line.strip("`").strip() != spans[0].strip():
            yield from (span for span in spans if span.strip() not in original)  # prose: its new code only
        else:
            yield line.strip("`")


def _is_code(text: str) -> bool:
    """Whether a line parses as Python on its own (a block's first line with a body added), or as a line of a
    statement spanning several lines (its brackets closed or opened around it): prose does not."""
    openers, closers = _unbalanced(text)
    head = "".join(_OPENING[c] for c in reversed(closers))  # `x, key=y)` -> `f(x, key=y)`
    tail = "".join(_CLOSING[c] for c in reversed(openers))  # `total = f(a,` -> `total = f(a,)`
    sources = [f"{head}\n{text}\n{tail}"] if head or tail else [text, f"f(\n{text}\n)"]
    for source in sources:
        for body in (source, source + "\n    pass"):
            try:
                parse_python(body)
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                continue
            return True
    return False


_OPENING = {")": "f(", "]": "x[", "}": "{"}
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def _unbalanced(text: str) -> tuple[list[str], list[str]]:
    """The brackets a line opens without closing and those it closes without opening, outside strings."""
    try:
        tokens = [
            t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.OP
        ]
    except (tokenize.TokenError, SyntaxError):
        tokens = [
            c for c in text if c in "()[]{}"
        ]  # an unclosed bracket ends tokenizing early: count by hand
    openers: list[str] = []
    closers: list[str] = []
    for token in tokens:
        if token in _CLOSING:
            openers.append(token)
        elif token in _OPENING:
            if openers and _CLOSING[openers[-1]] == token:
                openers.pop()
            else:
                closers.append(token)
    return openers, closers


def without_comment(text: str) -> str:
    """A line of code without its trailing comment ("x = 1  # Corrected version 1" -> "x = 1"); other text as is."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    comments = [token.start[1] for token in tokens if token.type == tokenize.COMMENT]
    return text[: comments[0]].rstrip() if comments else text


def _depth(line: str) -> int:
    """A line's indentation width."""
    return len(line) - len(line.lstrip())


def _key(text: str) -> str:
    """A line compared without whitespace."""
    return "".join(text.split())
