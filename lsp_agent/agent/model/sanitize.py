"""Make model output safe for the rest of the house: no lone surrogates, no absurdly deep tool arguments."""

from __future__ import annotations

import re
from typing import Any

# Deeper tool arguments are refused: no tool takes them, and they break recursive serialisers downstream.
MAX_ARGUMENT_DEPTH = 32

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """The text with every lone surrogate (not encodable as UTF-8) replaced by U+FFFD."""
    return _SURROGATE_RE.sub("\ufffd", text) if _SURROGATE_RE.search(text) else text


def clean_value(value: Any) -> Any:
    """A JSON value with lone surrogates replaced in every string and key (iterative, any depth)."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        source, parent, key = stack.pop()
        if isinstance(source, dict):
            items = [(clean_text(k) if isinstance(k, str) else k, v) for k, v in source.items()]
            copy: Any = dict.fromkeys(k for k, _ in items)  # keys keep their order
        elif isinstance(source, list):
            copy = [None] * len(source)
            items = list(enumerate(source))
        else:
            parent[key] = clean_text(source) if isinstance(source, str) else source
            continue
        parent[key] = copy
        stack.extend((item, copy, k) for k, item in items)
    return root[0]


def nesting_depth(value: Any, limit: int = MAX_ARGUMENT_DEPTH + 1) -> int:
    """How deeply dicts and lists nest in a value (counting stops at `limit`)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            if depth >= limit:
                return depth
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def too_deep(value: Any) -> bool:
    """True when tool arguments nest deeper than MAX_ARGUMENT_DEPTH."""
    return nesting_depth(value) > MAX_ARGUMENT_DEPTH
