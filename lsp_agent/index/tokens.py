"""Code-aware tokens for BM25: whole identifiers plus their snake_case/camelCase words, stemmed and normalised.

`parse_json_file` yields `parse_json_file`, `pars`, `json`, `file`; `HTTPResponse` yields `httpresponse`, `http`,
`respons`. Common code abbreviations and synonyms map to one word (`cfg`, `conf`, `configuration` -> `config`),
so a natural-language query meets the identifiers that implement it. Chunks count their terms by a stable hash of
each term (`term_hash`) and store the counts packed (`pack_terms`), so worker processes need no shared vocabulary.
"""

from __future__ import annotations

import hashlib
import os
import re
from array import array
from collections import Counter, _count_elements  # Counter's C counting loop, on a plain dict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import chain, repeat
from operator import lshift, or_

import Stemmer

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being below between both but by
    can could did do does doing down during each either else etc few for from further had has have having here
    how i if in into is it its itself just may me might more most must my no nor not now of off on once only or
    other our out over own same shall should so some such than that the their them then there these they this
    those through thus too under until up upon very via was we were what when where whether which while who whom
    why will with within would yet you your self cls""".split()
)

# Groups of words a query and the code use for the same thing; every member maps to the first one's stem.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("config", "configuration", "configure", "cfg", "conf"),
    ("directory", "dir", "dirs", "folder", "directories"),
    ("initialize", "init", "initialise", "initialization", "initialisation"),
    ("delete", "remove", "del", "rm", "erase", "unlink", "deletion", "removal"),
    ("fetch", "retrieve", "obtain"),
    ("create", "make", "construct", "instantiate", "creation"),
    ("error", "err", "errors"),
    ("exception", "exc"),
    ("message", "msg", "msgs"),
    ("number", "num", "nb"),
    ("argument", "arg", "args", "param", "params", "parameter", "kwargs", "kwarg"),
    ("string", "str"),
    ("dictionary", "dict", "mapping"),
    ("length", "len"),
    ("temporary", "tmp", "temp"),
    ("function", "func", "fn", "callable"),
    ("object", "obj"),
    ("attribute", "attr", "attrs"),
    ("value", "val", "vals"),
    ("variable", "var", "vars"),
    ("context", "ctx"),
    ("position", "pos"),
    ("source", "src"),
    ("destination", "dst", "dest"),
    ("element", "elem", "elems"),
    ("maximum", "max"),
    ("minimum", "min"),
    ("previous", "prev"),
    ("current", "cur", "curr"),
    ("utility", "util", "utils"),
    ("authenticate", "auth", "authentication"),
    ("representation", "repr"),
    ("iterate", "iter", "iterator", "iteration"),
    ("database", "db"),
    ("connection", "conn", "connect"),
    ("request", "req"),
    ("response", "resp", "reply"),
    ("index", "idx", "indices"),
    ("environment", "env"),
    ("document", "doc", "docs"),
    ("image", "img"),
    ("boolean", "bool"),
    ("integer", "int"),
    ("character", "char", "chars"),
    ("buffer", "buf"),
    ("command", "cmd"),
    ("password", "pwd", "passwd"),
    ("reference", "ref", "refs"),
    ("specification", "spec"),
    ("library", "lib"),
    ("package", "pkg"),
    ("information", "info"),
    ("description", "desc"),
    ("identifier", "ident"),
    ("callback", "cb"),
    ("validate", "validation", "validator", "verify"),
    ("calculate", "compute", "calc", "calculation", "computation"),
    ("convert", "conversion", "transform", "cast"),
    ("parse", "parser", "parsing"),
    ("serialize", "serialise", "serializer", "serialization", "dump", "dumps", "marshal"),
    ("deserialize", "deserialise", "load", "loads", "unmarshal"),
    ("execute", "exec", "invoke", "execution"),
    ("statistic", "stats", "stat"),
    ("previous", "prior"),
    ("sequence", "seq"),
    ("address", "addr"),
    ("expression", "expr"),
    ("implementation", "impl", "implement"),
    ("template", "tpl", "tmpl"),
    ("regular", "regex", "regexp", "re"),
    ("millisecond", "ms"),
    ("second", "sec", "secs"),
    ("token", "tok"),
    ("locale", "l10n"),
    ("translation", "i18n", "translate"),
)

_stemmer = Stemmer.Stemmer("english")
_CANONICAL: dict[str, str] = {}
for _group in SYNONYMS:
    _head = _stemmer.stemWord(_group[0])
    for _word in _group:
        _CANONICAL.setdefault(_stemmer.stemWord(_word), _head)


@lru_cache(maxsize=200_000)
def normalize_word(word: str) -> str | None:
    """Lowercase, stem and canonicalise one word; None for stopwords and single letters."""
    low = word.lower()
    if low in STOPWORDS or (len(low) < 2 and not low.isdigit()):
        return None
    stem = _stemmer.stemWord(low)
    return _CANONICAL.get(stem, stem)


@lru_cache(maxsize=400_000)
def identifier_tokens(ident: str) -> tuple[str, ...]:
    """Tokens of one identifier: the whole (if compound) and its normalised words."""
    parts = _PARTS.findall(ident)
    words = list(filter(None, map(normalize_word, parts)))
    if len(parts) > 1:
        whole = ident.lower().strip("_")
        if whole and whole not in words:
            words.insert(0, whole)
    return tuple(words)


def tokenize(text: str) -> list[str]:
    """All search tokens of a text (code, comments, docstrings or a query), grouped by identifier."""
    out: list[str] = []
    for ident, count in Counter(_IDENT.findall(text)).items():
        toks = identifier_tokens(ident)
        out.extend(toks * count if count > 1 else toks)
    return out


def tokenize_many(texts: Iterable[str]) -> list[str]:
    """Tokens of several texts concatenated (e.g. a symbol name and a path)."""
    out: list[str] = []
    for text in texts:
        out.extend(tokenize(text))
    return out


TERM_BITS = 47  # width of a term's hash; a packed pair is (hash << 16) | count, a non-negative int64
COUNT_MASK = 0xFFFF  # counts saturate here (BM25's tf term has long flattened out by then)


@lru_cache(maxsize=400_000)
def term_hash(term: str) -> int:
    """A stable 47-bit id of a search term (the same in every process and run; no vocabulary table needed)."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - TERM_BITS)


@lru_cache(maxsize=400_000)
def identifier_terms(ident: str) -> tuple[int, ...]:
    """identifier_tokens() as term hashes."""
    return tuple(map(term_hash, identifier_tokens(ident)))


def text_terms(text: str) -> list[int]:
    """The term hashes of a text, in order and repeated (a field's tokens to add to a chunk's counts)."""
    return list(chain.from_iterable(map(identifier_terms, _IDENT.findall(text))))


def count_terms(text: str) -> dict[int, int]:
    """Term hash -> count for a text; the loops run in C."""
    counts: dict[int, int] = {}
    _count_elements(counts, chain.from_iterable(map(identifier_terms, _IDENT.findall(text))))
    return counts


def add_terms(counts: dict[int, int], *extra: Iterable[int]) -> dict[int, int]:
    """Term hashes (e.g. a boosted field's text_terms()) added to counts in place; returns the counts."""
    for terms in extra:
        _count_elements(counts, terms)
    return counts


def pack_terms(counts: Mapping[int, int]) -> bytes:
    """A chunk's term-hash counts as native int64 values `term_hash << 16 | count`, how the index stores them."""
    values: Iterable[int] = counts.values()
    if max(values, default=0) > COUNT_MASK:
        values = [min(n, COUNT_MASK) for n in values]
    return array("q", map(or_, map(lshift, counts, repeat(16)), values)).tobytes()


def py_chunk_terms(text: str, extra: Sequence[int] = ()) -> tuple[int, bytes]:
    """(token count, pack_terms() blob) of a chunk: its text's terms plus extra term hashes (path, symbol)."""
    counts = count_terms(text)
    _count_elements(counts, extra)
    return sum(counts.values()), pack_terms(counts)


def py_identifier_counts(text: str) -> bytes:
    """Each distinct identifier as written, packed like terms: `term_hash(identifier) << 16 | count`."""
    counts: dict[int, int] = {}
    _count_elements(counts, map(term_hash, _IDENT.findall(text)))
    return pack_terms(counts)


def unpack_terms(blob: bytes) -> dict[int, int]:
    """pack_terms() read back: term hash -> count."""
    return {v >> 16: v & COUNT_MASK for v in array("q", blob)}


def _native_text_terms(text: str) -> list[int]:
    """text_terms() through the extension's identifier cache (symbol names and paths of chunks)."""
    return list(chain.from_iterable(map(_fastterms.identifier_terms, _IDENT.findall(text))))


# The hot entry points run natively when the optional C extension (_fastterms.c, built by setup.py) is
# there: byte-identical results, an order of magnitude faster. It splits identifiers itself and calls
# normalize_word() once per distinct word part and term_hash() once per distinct term (its own caches keep the
# results, so it is given the function without our lru_cache). The py_ versions above are the reference and the
# fallback; LSP_AGENT_NO_NATIVE=1 forces them (tests, benchmarks).
chunk_terms = py_chunk_terms
identifier_counts = py_identifier_counts
py_text_terms = text_terms
NATIVE = False
if os.environ.get("LSP_AGENT_NO_NATIVE", "") in ("", "0"):
    try:
        from lsp_agent.index import _fastterms
    except ImportError:  # not built (no compiler at install time)
        pass
    else:
        _fastterms.configure(normalize_word, term_hash.__wrapped__)
        chunk_terms = _fastterms.chunk_terms
        identifier_counts = _fastterms.identifier_counts
        text_terms = _native_text_terms
        NATIVE = True
