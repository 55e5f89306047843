"""Where the cursor is in the syntax tree: inside a string or a comment (no automatic suggestion there)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

from lsp_agent.index.incremental_parse import ParsedFile, parse_version
from lsp_agent.index.languages import language_for_path, parser_for

log = logging.getLogger(__name__)

# node types that hold code again inside a string (f-string and template substitutions)
CODE_INSIDE = frozenset(
    {"interpolation", "template_substitution", "string_interpolation", "format_expression"}
)
STRING_WORDS = ("string", "char_literal", "rune_literal", "heredoc")
KEPT_TREES = 8  # the last parse of this many documents, reused for their next version

_trees: OrderedDict[tuple[str, str], ParsedFile] = OrderedDict()
_trees_lock = threading.Lock()


def language_of(path: str, text: str) -> str | None:
    """The tree-sitter language of a file (None when no grammar parses it)."""
    try:
        return language_for_path(path, text)
    except Exception as exc:  # noqa: BLE001 - a broken grammar costs the check, never the completion
        log.debug("no language for %s: %s", path, exc)
        return None


def in_string_or_comment(language: str | None, text: str, offset: int, key: str = "") -> bool:
    """Whether the character offset `offset` of `text` lies inside a string literal or a comment; `key` names the
    document, whose previous parse is reused (a keystroke reparses a little, not the whole file)."""
    parser = parser_for(language) if language else None
    if parser is None or language is None:
        return False
    data = text.encode("utf-8", "surrogatepass")
    at = len(text[:offset].encode("utf-8", "surrogatepass"))
    with _trees_lock:
        previous = _trees.get((key, language)) if key else None
    tree = parse_version(parser, data, previous)
    if key:
        with _trees_lock:
            _trees[(key, language)] = (data, tree)
            _trees.move_to_end((key, language))
            while len(_trees) > KEPT_TREES:
                _trees.popitem(last=False)
    node = tree.root_node.descendant_for_byte_range(max(0, at - 1), at)
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


def kept_tree(key: str, text: str) -> Any:
    """A copy of the kept parse of a document when it is of exactly this text (None otherwise)."""
    data = text.encode("utf-8", "surrogatepass")
    with _trees_lock:
        tree = next((tree for slot, (kept, tree) in _trees.items() if slot[0] == key and kept == data), None)
    return tree.copy() if tree is not None else None


def forget_tree(key: str) -> None:
    """Drop a document's kept parse (it was closed)."""
    with _trees_lock:
        for slot in [slot for slot in _trees if slot[0] == key]:
            del _trees[slot]


def language_and_quoting(rel: str, text: str, offset: int, key: str) -> tuple[str | None, bool]:
    """The file's language and whether the offset is inside a string or comment (parses: call in a thread)."""
    language = language_of(rel, text)
    return language, in_string_or_comment(language, text, offset, key)
