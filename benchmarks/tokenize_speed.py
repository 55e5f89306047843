"""Tokenizer speed on Django's sdist: native chunk_terms()/identifier_counts() (_fastterms.c) against Python.

    python benchmarks/tokenize_speed.py [--package django==5.2.8] [--repeat 5]

Runs both versions of each function over every .py file's text (a whole file as one chunk, its path's terms as
the extras) of the same Django copy benchmarks/index_speed.py uses. Prints seconds for a cold pass (every cache
empty: the lru caches of tokens.py and the native identifier cache; both versions then call the same Python
tokenizer once per distinct identifier, timed on its own as "first sight") and the best of --repeat warm passes, the native speed-up of each
[target: warm chunk_terms >= 10x], and whether the outputs are byte-identical. The Python versions are the
baseline, measured in the same run.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from index_speed import fetch_sdist, python_tree  # noqa: E402 (also puts the repository on sys.path)

from lsp_agent.index import tokens  # noqa: E402

try:
    from lsp_agent.index import _fastterms
except ImportError:  # not built: main() says so
    _fastterms = None

Run = Callable[[list[str], list[list[int]]], list[object]]


def clear_caches() -> None:
    """Empty every tokenizer cache, Python's and the native one."""
    for fn in (tokens.normalize_word, tokens.identifier_tokens, tokens.term_hash, tokens.identifier_terms):
        fn.cache_clear()
    if _fastterms is not None:
        _fastterms.configure(tokens.identifier_terms, tokens.term_hash)


def first_sight(texts: list[str]) -> tuple[int, float]:
    """Distinct identifiers, and seconds to tokenize each once in Python (the part of a cold pass both pay)."""
    idents = sorted({m for t in texts for m in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t)})
    clear_caches()
    start = time.perf_counter()
    for ident in idents:
        tokens.identifier_terms(ident)
        tokens.term_hash(ident)
    return len(idents), time.perf_counter() - start


def timed(run: Run, texts: list[str], extras: list[list[int]]) -> tuple[float, list[object]]:
    """Seconds of one pass over all texts, and its results."""
    start = time.perf_counter()
    out = run(texts, extras)
    return time.perf_counter() - start, out


def runners(chunk_terms: Callable, identifier_counts: Callable) -> dict[str, Run]:
    """One pass of each function over all texts."""
    return {
        "chunk_terms": lambda texts, extras: [chunk_terms(t, e) for t, e in zip(texts, extras, strict=True)],
        "identifier_counts": lambda texts, extras: [identifier_counts(t) for t in texts],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", default="django==5.2.8")
    ap.add_argument("--repeat", type=int, default=5, help="warm passes of each version (default 5)")
    args = ap.parse_args()
    if _fastterms is None:
        print(
            "lsp_agent.index._fastterms is not built: run `pip install -e .` with a C compiler",
            file=sys.stderr,
        )
        return 1

    root = python_tree(fetch_sdist(args.package))
    paths = sorted(root.rglob("*.py"))
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    extras = [tokens.text_terms(p.relative_to(root).as_posix()) for p in paths]
    print(f"code base: {args.package}, {len(texts)} .py files, {sum(map(len, texts)):,} characters")
    n_idents, sight = first_sight(texts)
    print(
        f"first sight of {n_idents:,} distinct identifiers (Python identifier_terms + term_hash): {sight:.3f} s"
    )

    python = runners(tokens.py_chunk_terms, tokens.py_identifier_counts)
    native = runners(_fastterms.chunk_terms, _fastterms.identifier_counts)
    verdict = True
    for name in python:
        clear_caches()
        py_cold, py_out = timed(python[name], texts, extras)
        clear_caches()
        c_cold, c_out = timed(native[name], texts, extras)
        py_warm, c_warm = [], []
        for _ in range(max(1, args.repeat)):  # interleaved, so load on a shared machine hits both alike
            py_warm.append(timed(python[name], texts, extras)[0])
            c_warm.append(timed(native[name], texts, extras)[0])
        identical = py_out == c_out
        ratio = min(py_warm) / min(c_warm)
        print(
            f"{name:18} python: cold {py_cold:.3f} s, warm best {min(py_warm):.3f} s | "
            f"native: cold {c_cold:.3f} s, warm best {min(c_warm):.3f} s | "
            f"native {ratio:.1f}x warm, {py_cold / c_cold:.1f}x cold | identical: {'yes' if identical else 'NO'}"
        )
        verdict = verdict and identical
        if name == "chunk_terms":
            verdict = verdict and ratio >= 10
            print(f"{'':18} target: native chunk_terms >= 10x warm: {'met' if ratio >= 10 else 'NOT met'}")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
