"""The native tokenizer (lsp_agent/index/_fastterms.c) against the Python reference in tokens.py, byte for byte."""

from __future__ import annotations

import os
import platform
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.index import tokens
from lsp_agent.index.tokens import (
    identifier_terms,
    normalize_word,
    py_chunk_terms,
    py_identifier_counts,
    term_hash,
    text_terms,
)

try:
    from lsp_agent.index import _fastterms
except ImportError:  # built only where a C compiler was available at install time
    _fastterms = None

_term_hash = term_hash.__wrapped__  # what tokens.py gives the extension: term_hash() without its lru_cache
REPO = Path(__file__).resolve().parents[2]
DJANGO = REPO / "benchmarks" / ".cache" / "django-5.2.8-py"  # fetched by benchmarks/index_speed.py
needs_native = pytest.mark.skipif(
    _fastterms is None, reason="lsp_agent.index._fastterms is not built (pip install -e . needs a C compiler)"
)

EDGE_TEXTS = [
    "",
    " ",
    "123 4.5e6 0x1F",
    "9abc 12_x __init__ _ __ ___x a1b2",
    "x y z i j",  # single letters: identifier_terms() is ()
    "self the and of",  # stopwords: identifier_terms() is ()
    "HTTPResponse parse_json_file getHTTP2Server",
    "café naïve_name über",  # Latin-1 kind
    "中文 identifier 中 name_中_tail",  # UCS-2 kind
    "emoji 😀 ok_name 😀x",  # UCS-4 kind
    "\ud800abc\udfff def \udc80",  # lone surrogates
    "\x00abc\x00def\x00",
    "tabs\tand\r\nnewlines\x0bvt\x0cff",
    "a" * 10_000,
    " " * 60 + "long_identifier_name_across_a_block",
    "x" * 64,
    "y" * 63 + " ",
    "z" * 65,
    "é" * 63 + "q_1",
    "😀" * 17 + "wide_tail" * 20,
    "foo_bar " * 70_000,  # counts above 0xFFFF
    "".join(chr(c) for c in range(0x250)),  # every Latin-1 and a few more code points
]


@pytest.fixture
def native() -> Iterator[object]:
    """_fastterms configured with the real normalize_word (again afterwards, for tests that swap it)."""
    if _fastterms is None:
        pytest.skip("lsp_agent.index._fastterms is not built")
    _fastterms.configure(normalize_word, _term_hash)
    yield _fastterms
    _fastterms.configure(normalize_word, _term_hash)


def _python_files(root: Path = REPO) -> list[Path]:
    """Every .py file under root, outside hidden, build and cache folders."""
    skip = {"build", "node_modules", "__pycache__"}
    return [
        p
        for p in sorted(root.rglob("*.py"))
        if not any(part.startswith(".") or part in skip for part in p.relative_to(root).parts)
    ]


def _identifiers(root: Path) -> list[str]:
    """Every distinct identifier of the .py files under root."""
    found: set[str] = set()
    for path in _python_files(root):
        found.update(tokens._IDENT.findall(path.read_text(encoding="utf-8", errors="replace")))
    return sorted(found)


def _model_terms(ident: str, normalize) -> tuple[int, ...]:
    """identifier_terms() spelled out with another normalize_word, given each part lowercased as the native one is."""
    parts = tokens._PARTS.findall(ident)
    words = [w for w in map(normalize, map(str.lower, parts)) if w is not None]
    whole = ident.lower().strip("_")
    if len(parts) > 1 and whole and whole not in words:
        words.insert(0, whole)
    return tuple(term_hash.__wrapped__(w) for w in words)


def _random_text(rng: random.Random) -> str:
    """A short text mixing identifier characters, separators and non-ASCII code points of every kind."""
    alphabet = "abcXYZ_019 .,()\n\té中😀\ud800ſK"
    words = ["self", "init", "HTTPServer", "get_value", "x", "9lives", "__dunder__"]
    parts = [
        rng.choice(words) if rng.random() < 0.3 else rng.choice(alphabet) for _ in range(rng.randrange(200))
    ]
    return "".join(parts)


def test_repository_files_match_python(native) -> None:
    files = _python_files()
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        extra = text_terms(path.relative_to(REPO).as_posix()) * 3
        assert native.chunk_terms(text, extra) == py_chunk_terms(text, extra), path
        assert native.identifier_counts(text) == py_identifier_counts(text), path


@pytest.mark.skipif(not tokens.NATIVE, reason="the native tokenizer is not in use")
def test_text_terms_of_names_and_paths_match_python() -> None:
    texts = [p.relative_to(REPO).as_posix() for p in _python_files()] + EDGE_TEXTS[:12]
    texts += ["Inventory.reserve_stock", "WorkspaceIndex._flush_pending", "HTTPServer.handle_one_request"]
    assert tokens.text_terms is not tokens.py_text_terms
    for text in texts:
        assert tokens.text_terms(text) == tokens.py_text_terms(text), text


@pytest.mark.parametrize("text", EDGE_TEXTS, ids=range(len(EDGE_TEXTS)))
def test_edge_cases_match_python(native, text: str) -> None:
    assert native.chunk_terms(text) == py_chunk_terms(text)
    assert native.chunk_terms(text, [term_hash("path")]) == py_chunk_terms(text, [term_hash("path")])
    assert native.identifier_counts(text) == py_identifier_counts(text)


def test_random_texts_match_python(native) -> None:
    rng = random.Random(20261123)
    for _ in range(400):
        text = _random_text(rng)
        extra = [
            rng.choice([term_hash("x"), term_hash("value"), rng.randrange(-(2**47), 2**47)]) for _ in range(5)
        ]
        assert native.chunk_terms(text, extra) == py_chunk_terms(text, extra), repr(text)
        assert native.identifier_counts(text) == py_identifier_counts(text), repr(text)


@pytest.mark.parametrize(
    "extra",
    [
        [],
        [7],
        [-5, -5, 3],  # negative terms pack as two's complement, like array("q")
        [term_hash("pars")] * 4,  # already among the text's terms
        [11] * 70_000,  # a count above 0xFFFF from extras alone
        [True, 1, 2**47 - 1, -(2**47)],  # True counts as 1; the extreme packable terms
    ],
)
def test_extras_match_python(native, extra: list[int]) -> None:
    text = "def parse_json_file(path): return parse(path)"
    assert native.chunk_terms(text, extra) == py_chunk_terms(text, extra)
    assert native.chunk_terms(text, iter(extra)) == py_chunk_terms(text, iter(extra))
    assert native.chunk_terms(text=text, extra=tuple(extra)) == py_chunk_terms(text, tuple(extra))


def test_unpackable_input_raises_like_python(native) -> None:
    for bad in ([2**47], [-(2**47) - 1]):
        with pytest.raises(OverflowError):
            py_chunk_terms("a_b", bad)
        with pytest.raises(OverflowError):
            native.chunk_terms("a_b", bad)
    with pytest.raises(TypeError):
        native.chunk_terms("a_b", [1.5])
    with pytest.raises(TypeError):
        native.chunk_terms(b"bytes")
    with pytest.raises(TypeError):
        native.identifier_counts(None)


def test_callable_errors_propagate(native) -> None:
    def broken(ident: str) -> tuple[int, ...]:
        raise ZeroDivisionError(ident)

    native.configure(broken, _term_hash)
    with pytest.raises(ZeroDivisionError, match="alpha"):
        native.chunk_terms("alpha beta")
    assert native.cache_size() == 0
    native.configure(lambda word: 5, _term_hash)
    with pytest.raises(TypeError, match="str or None"):
        native.identifier_counts("alpha")
    with pytest.raises(TypeError):
        native.configure("not callable")
    with pytest.raises(TypeError):
        native.identifier_terms("caf\xe9")


def test_configure_empties_the_cache(native) -> None:
    assert (native.cache_size(), native.word_cache_size()) == (0, 0)
    native.chunk_terms("alpha beta alpha alpha_beta")
    assert (native.cache_size(), native.word_cache_size()) == (3, 2)
    native.configure(str.upper, _term_hash)  # a word part arrives lowercased; its word is hashed as returned
    assert (native.cache_size(), native.word_cache_size()) == (0, 0)
    total, blob = native.chunk_terms("ab cde Ab")
    assert total == 3 and tokens.unpack_terms(blob) == {term_hash("AB"): 2, term_hash("CDE"): 1}


@pytest.mark.parametrize("suffix", ["", "\xe9", "\u4e2d", "\U0001f600", "\ud800"])
def test_words_from_normalize_word_are_hashed_as_utf8(native, suffix: str) -> None:
    def normalize(word: str) -> str | None:
        return None if word == "skip" else word + suffix

    native.configure(normalize, _term_hash)
    for ident in ["get_value", "HTTPResponse", "skip_me", "skip", "get_get", "a1", "__x__"]:
        assert native.identifier_terms(ident) == _model_terms(ident, normalize), ident


@pytest.mark.slow
def test_cache_is_emptied_past_its_cap_mid_call(native) -> None:
    # 1.1M distinct identifiers, 1.1M + 1 distinct word parts: both caches are emptied in the middle of the call
    native.configure(lambda word: word if word.isalpha() else None, _term_hash)
    text = " ".join(f"x{i}" for i in range(1_100_000))
    total, blob = native.chunk_terms(text)
    assert total == 2_200_000  # each identifier: its whole and "x" (its digits are dropped)
    expected = dict.fromkeys(map(term_hash.__wrapped__, (f"x{i}" for i in range(1_100_000))), 1)
    expected[term_hash("x")] = 0xFFFF
    assert tokens.unpack_terms(blob) == expected
    assert native.cache_size() == 1_100_000 - 2**20
    assert native.word_cache_size() == 1_100_001 - 2**20 + 1  # "x" again after the clearing
    counts = native.identifier_counts("x1 x22 x1")
    assert tokens.unpack_terms(counts) == {term_hash("x1"): 2, term_hash("x22"): 1}


def test_threads_share_the_cache_safely(native) -> None:
    texts = [p.read_text(encoding="utf-8") for p in _python_files()[:40]]
    expected = [py_chunk_terms(t) for t in texts]
    failures: list[str] = []

    def work() -> None:
        for _ in range(3):
            native.configure(normalize_word, _term_hash)  # empties the caches under the other threads
            if [native.chunk_terms(t) for t in texts] != expected:
                failures.append(threading.current_thread().name)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


TRICKY_IDENTIFIERS = [
    "HTTPResponse", "parse_json_file", "ABC1def", "get2XML", "getHTTP2Server", "XMLHttpRequest", "ABC", "A",
    "a", "x", "_", "__", "___", "__init__", "_private", "trailing_", "double__under", "_A_b_", "aB", "Ab",
    "AB", "ABc", "ABCd", "abcDEF", "abcDEFg", "a1", "A1", "a1B", "_1", "x_1_y", "v2", "utf8", "UTF8Codec",
    "self", "cls", "self_", "the_and_of", "cfg", "conf_dir", "ConfigurationError", "get_get", "parse_parser",
    "initInit", "__get__", "Get", "GET", "get_GET", "i18n", "l10n_utils", "s3", "x" * 300, "A" * 200 + "b",
    "snake_" * 40 + "tail", "MixedCase" * 30, "D" + "9" * 129,
    "config", "json", "file", "Config", "x1", "get_value_", "parse_json",  # own hash = a word's or the whole's
]  # fmt: skip


@pytest.mark.parametrize("ident", TRICKY_IDENTIFIERS)
def test_tricky_identifiers_match_python(native, ident: str) -> None:
    assert native.identifier_terms(ident) == identifier_terms(ident)
    assert tokens.unpack_terms(native.identifier_counts(ident)) == {term_hash(ident): 1}


def test_repository_identifiers_match_python(native) -> None:
    idents = _identifiers(REPO)
    assert len(idents) > 1000
    native.configure(normalize_word, _term_hash)
    assert [native.identifier_terms(i) for i in idents] == [identifier_terms(i) for i in idents]
    native.configure(normalize_word, _term_hash)
    assert native.identifier_counts(" ".join(idents)) == py_identifier_counts(" ".join(idents))


@pytest.mark.skipif(
    not DJANGO.is_dir(), reason="no Django copy: run benchmarks/index_speed.py once to fetch it"
)
@pytest.mark.slow
def test_django_identifiers_match_python(native) -> None:
    idents = _identifiers(DJANGO)
    assert len(idents) > 50_000
    assert [native.identifier_terms(i) for i in idents] == [identifier_terms(i) for i in idents]
    native.configure(normalize_word, _term_hash)
    assert native.identifier_counts(" ".join(idents)) == py_identifier_counts(" ".join(idents))


def test_terms_are_hashed_by_the_configured_term_hash(native) -> None:
    # the extension has no hash of its own: every term (words, wholes, identifiers) comes from term_hash()
    seen: list[str] = []

    def spy(term: str) -> int:
        seen.append(term)
        return _term_hash(term)

    native.configure(normalize_word, spy)
    text = "parse_json_file(path) HTTPResponse parse_json_file json x"
    assert native.chunk_terms(text) == py_chunk_terms(text)
    assert native.identifier_counts(text) == py_identifier_counts(text)
    assert {"parse_json_file", "pars", "json", "file", "httpresponse", "http", "respons", "path", "x"} <= set(
        seen
    )
    assert "HTTPResponse" in seen  # its own hash, for identifier_counts()
    assert len(seen) == len(set(seen))  # once per distinct term: the caches keep the rest
    native.configure(normalize_word, lambda term: 7)
    assert tokens.unpack_terms(native.identifier_counts("alpha beta")) == {7: 2}


@pytest.mark.parametrize("bad", [lambda term: "str", lambda term: -1, lambda term: 2**47, lambda term: 1.5])
def test_term_hash_results_are_checked(native, bad) -> None:
    native.configure(normalize_word, bad)
    with pytest.raises(TypeError, match="term_hash"):
        native.chunk_terms("alpha_beta")
    assert native.cache_size() == 0


def test_term_hash_errors_propagate(native) -> None:
    def broken(term: str) -> int:
        raise ZeroDivisionError(term)

    native.configure(normalize_word, broken)
    with pytest.raises(ZeroDivisionError):
        native.identifier_terms("alpha")
    with pytest.raises(TypeError, match="two callables"):
        native.configure(normalize_word)


def _dispatch_in_subprocess(no_native: str | None) -> str:
    """What tokens.py picked in a fresh interpreter, with LSP_AGENT_NO_NATIVE set to no_native (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "LSP_AGENT_NO_NATIVE"}
    if no_native is not None:
        env["LSP_AGENT_NO_NATIVE"] = no_native
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    code = "from lsp_agent.index import tokens as t; print(t.NATIVE, t.chunk_terms is t.py_chunk_terms)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_no_native_env_selects_python() -> None:
    assert _dispatch_in_subprocess("1") == "False True"


@needs_native
def test_native_is_the_default() -> None:
    assert _dispatch_in_subprocess(None) == "True False"


@needs_native
@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="SSE2 is compiled in on x86-64 only"
)
def test_installed_build_uses_the_sse2_scanner() -> None:
    # the portable scanner is built and checked by test_fastterms_portable.py
    assert _fastterms.SCANNER == "sse2"
