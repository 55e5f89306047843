"""JSON-ish text a model wrote: the first balanced {...} object, and a Python-literal reading of it."""

from __future__ import annotations

import re

_JSON_WORD_RE = re.compile(r"(true|false|null)\b")
_TRAILING_COMMA_RE = re.compile(r",\s*[}\]]")


class _Strings:
    """Where a left-to-right scan stands: inside a '...' or "..." string (backslash escapes kept) or not."""

    __slots__ = ("escape", "quote")

    def __init__(self) -> None:
        self.quote: str | None = None
        self.escape = False

    def feed(self, ch: str) -> bool:
        """Step over `ch`; True when it belongs to a string (its quotes included)."""
        if self.quote:
            if self.escape:
                self.escape = False
            elif ch == "\\":
                self.escape = True
            elif ch == self.quote:
                self.quote = None
            return True
        if ch in "\"'":
            self.quote = ch
            return True
        return False


def balanced_object(text: str) -> str:
    """The text of the first balanced {...} object (string-aware); the whole text if it never closes."""
    depth = 0
    strings = _Strings()
    for i, ch in enumerate(text):
        if strings.feed(ch):
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def python_literal_form(text: str) -> str | None:
    """JSON-ish text turned into a Python literal: true/false/null mapped, trailing commas dropped (outside strings)."""
    out: list[str] = []
    strings = _Strings()
    i = 0
    changed = False
    while i < len(text):
        ch = text[i]
        if strings.feed(ch):
            out.append(ch)
            i += 1
            continue
        word = _JSON_WORD_RE.match(text, i)
        if word and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append({"true": "True", "false": "False", "null": "None"}[word.group(1)])
            i += len(word.group(1))
            changed = True
            continue
        if ch == ",":
            nxt = _TRAILING_COMMA_RE.match(text, i)
            if nxt:
                i += 1
                changed = True
                continue
        out.append(ch)
        i += 1
    result = "".join(out)
    return result if changed or "'" in text else None
