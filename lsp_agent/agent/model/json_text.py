"""JSON-ish text a model wrote: the first balanced {...} object, and a Python-literal reading of it."""

from __future__ import annotations

import re

_JSON_WORD_RE = re.compile(r"(true|false|null)\b")
_TRAILING_COMMA_RE = re.compile(r",\s*[}\]]")


def balanced_object(text: str) -> str:
    """The text of the first balanced {...} object (string-aware); the whole text if it never closes."""
    depth = 0
    quote: str | None = None
    escape = False
    for i, ch in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def python_literal_form(text: str) -> str | None:
    """JSON-ish text turned into a Python literal: true/false/null mapped, trailing commas dropped (outside strings)."""
    out: list[str] = []
    quote: str | None = None
    escape = False
    i = 0
    changed = False
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
            i += 1
            continue
        if ch in "\"'":
            quote = ch
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
