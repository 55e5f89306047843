"""Where the cursor is in the syntax tree: inside a string or a comment (no automatic suggestion there)."""

from __future__ import annotations

import logging

from lsp_agent.index.languages import language_for_path, parser_for

log = logging.getLogger(__name__)

# node types that hold code again inside a string (f-string and template substitutions)
CODE_INSIDE = frozenset(
    {"interpolation", "template_substitution", "string_interpolation", "format_expression"}
)
STRING_WORDS = ("string", "char_literal", "rune_literal", "heredoc")


def language_of(path: str, text: str) -> str | None:
    """The tree-sitter language of a file (None when no grammar parses it)."""
    try:
        return language_for_path(path, text)
    except Exception as exc:  # noqa: BLE001 - a broken grammar costs the check, never the completion
        log.debug("no language for %s: %s", path, exc)
        return None


def in_string_or_comment(language: str | None, text: str, offset: int) -> bool:
    """Whether the character offset `offset` of `text` lies inside a string literal or a comment."""
    parser = parser_for(language) if language else None
    if parser is None:
        return False
    data = text.encode("utf-8", "surrogatepass")
    at = len(text[:offset].encode("utf-8", "surrogatepass"))
    node = parser.parse(data).root_node.descendant_for_byte_range(max(0, at - 1), at)
    while node is not None:
        kind = node.type
        if kind in CODE_INSIDE:
            return False
        if "comment" in kind and node.start_byte < at <= node.end_byte:
            return True
        if any(word in kind for word in STRING_WORDS) and node.start_byte < at < node.end_byte:
            return not kind.endswith(("_start", "_end"))
        if "string" in kind and kind.endswith("_start") and at == node.end_byte:
            return True  # just after the opening quote
        node = node.parent
    return False
