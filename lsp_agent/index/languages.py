r"""Languages the index parses: one tag-query file per language under queries/, naming its grammar package.

Adding a language means installing its tree-sitter grammar package and dropping `queries/NAME.scm` with a header:

    ; grammar: tree_sitter_javascript.language
    ; extensions: .js .mjs .cjs
    ; wrappers: export_statement          (optional: nodes whose span a definition takes, e.g. decorators)
    ; leading: decorator                  (optional: siblings above a definition that belong to it, like comments)
    ; max-depth: 8                        (optional: deepest tree level where indexing looks for definitions)
    ; inherits: typescript jsx            (optional: the patterns of queries/typescript.scm, jsx.scm come first)
    ; detect .h: ^\s*namespace\b          (optional: a file of another language's extension whose text matches)

followed by tag patterns (@name.definition.KIND / @definition.KIND, @name.reference.KIND / @reference.KIND, and
@scope for the type a definition outside its body belongs to: a Go receiver, C++'s `Type::method`).
Patterns several languages share live in a fragment, a query file headed `; fragment: WHAT` instead of a grammar
(ecma.scm: JavaScript's and TypeScript's; jsx.scm), which each of them names in `; inherits:`; inheriting chains.
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
    leading: frozenset[str] = frozenset()
    max_depth: int | None = None
    detect: tuple[tuple[str, re.Pattern[str]], ...] = ()  # (extension, pattern) claimed from other languages
    inherits: str | None = None


def _header(text: str) -> dict[str, str]:
    """The `; key: value` lines at the top of a query file, keys lowercased (the first of a repeated key wins)."""
    meta: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        key, sep, value = line.lstrip("; ").partition(":")
        if sep:
            meta.setdefault(key.strip().lower(), value.strip())
    return meta


def _parse_header(name: str, text: str) -> LanguageSpec | None:
    """A language's spec from its query file; None for a fragment, or when a header value is missing or bad."""
    meta = _header(text)
    if "fragment" in meta:
        return None
    if "grammar" not in meta or "extensions" not in meta:
        log.warning("query file %s.scm lacks a '; grammar:' or '; extensions:' header; skipped", name)
        return None
    exts = tuple(_dotted(e) for e in meta["extensions"].split())
    try:
        detect = tuple(
            (_dotted(key.split()[1]), re.compile(value, re.MULTILINE))
            for key, value in meta.items()
            if key.startswith("detect ") and len(key.split()) == 2
        )
        max_depth = int(meta["max-depth"]) if "max-depth" in meta else None
    except (re.error, ValueError) as exc:
        log.warning("query file %s.scm has a bad header value (%s); skipped", name, exc)
        return None
    return LanguageSpec(
        name,
        meta["grammar"],
        exts,
        frozenset(meta.get("wrappers", "").split()),
        text,
        frozenset(meta.get("leading", "").split()),
        max_depth,
        detect,
        meta.get("inherits"),
    )


def _dotted(ext: str) -> str:
    """`.ts` from `ts` or `.TS`."""
    ext = ext.lower()
    return ext if ext.startswith(".") else "." + ext


def _query_source(spec: LanguageSpec) -> str:
    """The query text with the patterns of the files it inherits from first, in the order named, each file once."""
    texts: list[str] = []
    _add_inherited(spec.name, spec.inherits, texts, {spec.name})
    return "\n".join([*texts, spec.query_text])


def _add_inherited(name: str, inherits: str | None, texts: list[str], seen: set[str]) -> None:
    """Append the texts of the files `; inherits:` names (space or comma separated), their own parents first."""
    for parent in (inherits or "").replace(",", " ").split():
        if parent in seen:
            continue
        seen.add(parent)
        path = QUERY_DIR / f"{parent}.scm"
        if not path.is_file():
            log.warning("query file %s.scm inherits %s.scm, which does not exist", name, parent)
            continue
        text = path.read_text(encoding="utf-8")
        _add_inherited(parent, _header(text).get("inherits"), texts, seen)
        texts.append(text)


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


@cache
def _detectors() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """File extension -> (language, pattern) that claim a file of that extension by its text."""
    out: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for spec in language_specs().values():
        for ext, pattern in spec.detect:
            out.setdefault(ext, []).append((spec.name, pattern))
    return out


DETECT_CHARS = 100_000  # how much of a file `; detect` patterns look at


def language_for_path(path: str, text: str | None = None) -> str | None:
    """The language whose grammar parses this file, or None (the file is then chunked in line windows).

    With the text, an extension several languages use (`.h`: C or C++) goes to the one whose `; detect` pattern
    matches it, else to the extension's own language.
    """
    suffix = Path(path).suffix.lower()
    if text is not None:
        head = text[:DETECT_CHARS]
        for name, pattern in _detectors().get(suffix, ()):
            if pattern.search(head) and load_language(name) is not None:
                return name
    name = _extension_map().get(suffix)
    return name if name and load_language(name) is not None else None


@dataclass(frozen=True)
class LoadedLanguage:
    """A ready grammar and its tag query with the reference patterns disabled (what indexing runs)."""

    spec: LanguageSpec
    language: ts.Language
    definitions: ts.Query
    query_text: str  # the whole query, inherited patterns included


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
    query_text = _query_source(spec)
    try:
        definitions = ts.Query(language, query_text)
    except ts.QueryError as exc:
        log.warning("query file for %s does not compile: %s", name, exc)
        return None
    source = query_text.encode("utf-8")
    for i in range(definitions.pattern_count):
        if _REFERENCE_CAPTURE.search(
            source[definitions.start_byte_for_pattern(i) : definitions.end_byte_for_pattern(i)]
        ):
            definitions.disable_pattern(i)
    return LoadedLanguage(spec, language, definitions, query_text)


@cache
def full_query(name: str) -> ts.Query:
    """The whole tag query of a loaded language, references included (find_symbol's on-demand pass)."""
    loaded = load_language(name)
    assert loaded is not None
    return ts.Query(loaded.language, loaded.query_text)


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
