"""The native tokenizer (lsp_agent/index/_fastterms.c) against the Python reference in tokens.py, byte for byte."""

from __future__ import annotations

import os
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
    py_chunk_terms,
    py_identifier_counts,
    term_hash,
    text_terms,
)

try:
    from lsp_agent.index import _fastterms
except ImportError:  # built only where a C compiler was available at install time
    _fastterms = None

REPO = Path(__file__).resolve().parents[2]
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
    """_fastterms configured with the real callables (again afterwards, for tests that swap them)."""
    if _fastterms is None:
        pytest.skip("lsp_agent.index._fastterms is not built")
    _fastterms.configure(identifier_terms, term_hash)
    yield _fastterms
    _fastterms.configure(identifier_terms, term_hash)


def _python_files() -> list[Path]:
    """Every .py file of this repository, outside hidden, build and cache folders."""
    skip = {"build", "node_modules", "__pycache__"}
    return [
        p
        for p in sorted(REPO.rglob("*.py"))
        if not any(part.startswith(".") or part in skip for part in p.relative_to(REPO).parts)
    ]


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

    native.configure(broken, term_hash)
    with pytest.raises(ZeroDivisionError, match="alpha"):
        native.chunk_terms("alpha beta")
    native.configure(identifier_terms, lambda ident: "not an int")
    with pytest.raises(TypeError):
        native.identifier_counts("alpha")


def test_configure_empties_the_cache(native) -> None:
    assert native.cache_size() == 0
    native.chunk_terms("alpha beta alpha")
    assert native.cache_size() == 2
    native.configure(lambda ident: (len(ident),), term_hash)
    assert native.cache_size() == 0
    total, blob = native.chunk_terms("ab cde ab")
    assert total == 3 and tokens.unpack_terms(blob) == {2: 2, 3: 1}


def test_cache_is_emptied_past_its_cap_mid_call(native) -> None:
    native.configure(lambda ident: (len(ident),), lambda ident: len(ident) + 1000)
    text = " ".join(f"x{i}" for i in range(1_100_000))  # more distinct identifiers than the cache keeps
    total, blob = native.chunk_terms(text)
    assert total == 1_100_000
    assert tokens.unpack_terms(blob) == {2: 10, 3: 90, 4: 900, 5: 9000, 6: 0xFFFF, 7: 0xFFFF, 8: 0xFFFF}
    assert native.cache_size() == 1_100_000 - 2**20
    assert tokens.unpack_terms(native.identifier_counts("x1 x22 x1")) == {1002: 2, 1003: 1}


def test_threads_share_the_cache_safely(native) -> None:
    texts = [p.read_text(encoding="utf-8") for p in _python_files()[:40]]
    expected = [py_chunk_terms(t) for t in texts]
    failures: list[str] = []

    def work() -> None:
        for _ in range(3):
            native.configure(identifier_terms, term_hash)  # empties the cache under the other threads
            if [native.chunk_terms(t) for t in texts] != expected:
                failures.append(threading.current_thread().name)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


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
