"""The model's text as a suggestion: one line or the rest of the block, never repeating what follows the cursor.

A multi-line suggestion ends where the block it started in ends: at the first line indented less than the cursor's
line, at a line back at that indentation after the suggestion opened a block (`def f():` ... `def g():`), or after
the line that closes a bracket the suggestion opened (`}` of a `{` it wrote). The same test runs on the text as it
streams, so the request is closed as soon as the block is known to be complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPENERS, CLOSERS = "([{", ")]}"
# a line at the block's own indentation that continues the block it follows
CONTINUES = re.compile(r"(else|elif|except|finally|catch|case|default)\b|[)\]}]")
# special tokens of code models that must never reach the editor (a model may write one before stopping)
SPECIAL_TOKENS = re.compile(
    r"<\|(?:endoftext|file_sep|fim_prefix|fim_suffix|fim_middle|fim_pad|repo_name|im_end|im_start|"
    r"end_of_text|file_separator)\|>|<(?:file_sep|fim_prefix|fim_suffix|fim_middle|\|endoftext\|)>|<EOT>|</s>"
)


@dataclass(frozen=True)
class Cursor:
    """The text around the cursor that shapes a suggestion."""

    line_prefix: str  # the cursor's line up to the cursor
    line_suffix: str  # the cursor's line after the cursor
    next_lines: tuple[str, ...] = ()  # a few lines after the cursor's line

    @property
    def multiline(self) -> bool:
        """A suggestion may span lines only at the end of a line (mid-line it completes that line)."""
        return not self.line_suffix.strip()


def indent_width(line: str) -> int:
    """The width of a line's leading whitespace (a tab counts 4)."""
    stripped = line.lstrip(" \t")
    return len(line[: len(line) - len(stripped)].expandtabs(4))


def bracket_balance(text: str) -> int:
    """Openers minus closers, outside string literals (a rough count, line by line)."""
    text = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", "", text)
    return sum(text.count(c) for c in OPENERS) - sum(text.count(c) for c in CLOSERS)


def block_end(text: str, cursor: Cursor) -> int | None:
    """Where the suggestion's block ends in `text` (an index to cut at), or None when it has not ended yet."""
    lines = text.split("\n")
    first = cursor.line_prefix + lines[0]
    base = indent_width(first) if first.strip() else len(cursor.line_prefix.expandtabs(4))
    opened = first.rstrip().endswith((":", "{", "(", "[")) and len(lines) > 1
    balance = bracket_balance(lines[0])
    pos = len(lines[0]) + 1
    body = False
    for i, line in enumerate(lines[1:], 1):
        complete = i < len(lines) - 1
        if line.strip():
            indent = indent_width(line)
            closes_own = line.lstrip()[:1] in CLOSERS and balance > 0
            ends = indent < base or (
                opened and body and indent <= base and not CONTINUES.match(line.lstrip())
            )
            if ends or (closes_own and indent <= base):
                if closes_own and bracket_balance(line) < 0:  # the closer of a bracket the suggestion opened
                    return pos + len(line) if complete else None
                return pos - 1  # before the newline that leads to this line
            body = body or indent > base
            if complete:
                balance += bracket_balance(line)
        pos += len(line) + 1
    return None


def repeats_next_line(line: str, cursor: Cursor) -> bool:
    """Whether a suggested line is the first non-blank line already after the cursor (same indentation)."""
    following = next((n for n in cursor.next_lines if n.strip()), None)
    return following is not None and line.strip() == following.strip() and line.rstrip() == following.rstrip()


def trim_line_overlap(text: str, cursor: Cursor) -> str:
    """A one-line suggestion without the text after the cursor that it repeats at its end.

    An overlap with brackets is cut only when that balances the line (`foo(|)` + `a, b)` -> `a, b`, while
    `print(|)` + `foo()` keeps its `)`); one without is cut when it is the whole rest of the line."""
    rest = cursor.line_suffix.rstrip()
    for k in range(len(rest), 0, -1):
        piece = rest[:k]
        if not text.endswith(piece):
            continue
        trimmed = text[:-k]
        if any(c in OPENERS + CLOSERS for c in piece):
            before = bracket_balance(cursor.line_prefix + text + cursor.line_suffix)
            after = bracket_balance(cursor.line_prefix + trimmed + cursor.line_suffix)
            if abs(after) < abs(before):
                return trimmed
        elif k == len(rest):
            return trimmed
    return text


def finish(text: str, cursor: Cursor, cut_short: bool = False) -> str:
    """The suggestion to show for the model's text ('' for none); `cut_short`: the reply hit its token limit."""
    special = SPECIAL_TOKENS.search(text)
    if special:
        text = text[: special.start()]
    text = text.replace("\r\n", "\n")
    if not cursor.multiline:
        text = text.split("\n", 1)[0]
        return trim_line_overlap(text.rstrip(), cursor) if text.strip() else ""
    end = block_end(text, cursor)
    if end is None and cut_short and "\n" in text:
        end = text.rfind("\n")  # the reply was cut at its token limit: whole lines only
    if end is not None:
        text = text[:end]
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i and repeats_next_line(line, cursor):
            lines = lines[:i]
            break
    text = "\n".join(lines).rstrip()
    if not text.strip() or (len(lines) == 1 and repeats_next_line(cursor.line_prefix + text, cursor)):
        return ""
    return text


def without_fence(text: str) -> str:
    """A chat reply without the code fence it may wrap the code in."""
    stripped = text.strip("\n")
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0].rstrip("\n")
    return stripped
