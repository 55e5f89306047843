"""Languages the index parses: one tag-query file per language under queries/, naming its grammar package.

Adding a language means installing its tree-sitter grammar package and dropping `queries/NAME.scm` with a header:

    ; grammar: tree_sitter_javascript.language
    ; extensions: .js .mjs .cjs
    ; wrappers: export_statement          (optional: nodes whose span a definition takes, e.g. decorators)

followed by tag patterns (@name.definition.KIND / @definition.KIND, @name.reference.KIND / @reference.KIND).
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import tree_sitter as ts

log = logging.getLogger(__name__)

QUERY_DIR = Path(__file__).parent / "queries"
_REFERENCE_CAPTURE = re.compile(rb"@(name\.)?reference\.")


@dataclass(frozen=True)
class LanguageSpec:
    """A grammar, the file extensions it parses and its tag query text."""

    name: str
    grammar: str  # "module.function" returning the tree-sitter language pointer
    extensions: tuple[str, ...]
    wrappers: frozenset[str]
    query_text: str


def _parse_header(name: str, text: str) -> LanguageSpec | None:
    """Read the `; key: value` header of a query file; None when it names no grammar."""
    meta: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        key, sep, value = line.lstrip("; ").partition(":")
        if sep:
            meta.setdefault(key.strip().lower(), value.strip())
    if "grammar" not in meta or "extensions" not in meta:
        log.warning("query file %s.scm lacks a '; grammar:' or '; extensions:' header; skipped", name)
        return None
    exts = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in meta["extensions"].split())
    wrappers = frozenset(meta.get("wrappers", "").split())
    return LanguageSpec(name, meta["grammar"], exts, wrappers, text)


@cache
def language_specs() -> dict[str, LanguageSpec]:
    """All query files shipped with the package, by language name."""
    specs: dict[str, LanguageSpec] = {}
    for path in sorted(QUERY_DIR.glob("*.scm")):
        spec = _parse_header(path.stem, path.read_text(encoding="utf-8"))
        if spec:
            specs[spec.name] = spec
    return specs


@cache
def _extension_map() -> dict[str, str]:
    """File extension -> language name."""
    return {ext: spec.name for spec in language_specs().values() for ext in spec.extensions}


def language_for_path(path: str) -> str | None:
    """The language whose grammar parses this file, or None (the file is then chunked in line windows)."""
    suffix = Path(path).suffix.lower()
    name = _extension_map().get(suffix)
    return name if name and load_language(name) is not None else None


@dataclass(frozen=True)
class LoadedLanguage:
    """A ready grammar and its tag query with the reference patterns disabled (what indexing runs)."""

    spec: LanguageSpec
    language: ts.Language
    definitions: ts.Query


@cache
def load_language(name: str) -> LoadedLanguage | None:
    """Import the grammar package and compile the query; None (logged once) when the grammar is not installed."""
    spec = language_specs().get(name)
    if spec is None:
        return None
    module_name, _, func_name = spec.grammar.rpartition(".")
    try:
        module = importlib.import_module(module_name)
        language = ts.Language(getattr(module, func_name)())
    except (ImportError, AttributeError, ValueError) as exc:
        log.info("no tree-sitter grammar for %s (%s); its files are indexed as line windows", name, exc)
        return None
    try:
        definitions = ts.Query(language, spec.query_text)
    except ts.QueryError as exc:
        log.warning("query file for %s does not compile: %s", name, exc)
        return None
    source = spec.query_text.encode("utf-8")
    for i in range(definitions.pattern_count):
        if _REFERENCE_CAPTURE.search(
            source[definitions.start_byte_for_pattern(i) : definitions.end_byte_for_pattern(i)]
        ):
            definitions.disable_pattern(i)
    return LoadedLanguage(spec, language, definitions)


@cache
def full_query(name: str) -> ts.Query:
    """The whole tag query of a loaded language, references included (find_symbol's on-demand pass)."""
    loaded = load_language(name)
    assert loaded is not None
    return ts.Query(loaded.language, loaded.spec.query_text)


_parsers = threading.local()


def parser_for(name: str) -> ts.Parser | None:
    """A per-thread parser for the language (tree-sitter parsers are not shared across threads)."""
    loaded = load_language(name)
    if loaded is None:
        return None
    cache_: dict[str, ts.Parser] = getattr(_parsers, "by_name", None) or {}
    _parsers.by_name = cache_
    parser = cache_.get(name)
    if parser is None:
        parser = cache_[name] = ts.Parser(loaded.language)
    return parser
