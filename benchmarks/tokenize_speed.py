"""Tokenizer speed on Django's sdist: native chunk_terms()/identifier_counts() (_fastterms.c) against Python.

    python benchmarks/tokenize_speed.py [--package django==5.2.8] [--repeat 5]

Runs both versions of each function over every .py file's text (a whole file as one chunk, its path's terms as
the extras) of the Django copy benchmarks/index_speed.py uses; the Python versions are the baseline, measured in
the same run. Prints the seconds of a cold pass (every cache empty: tokens.py's lru caches and the native
identifier cache) and the best of --repeat warm passes, the native speed-up [target: warm chunk_terms >= 10x on
whole files], and whether the outputs are byte-identical. "First sight" times giving each distinct identifier
its terms and own hash once: Python's identifier_terms() + term_hash() (the baseline) against the native cache,
which splits identifiers in C and calls Python's normalize_word() once per distinct word part and term_hash()
(hashlib's BLAKE2b, as the baseline does) once per distinct term [target: native >= 3x faster], best of up
to 3 cold runs of each. The native cache fills in both an
identifier's terms and its own hash at first sight, so a cold identifier_counts() alone pays for the terms too
(the index calls both functions on every file). chunk_terms is also measured on the files cut before each
def/class line, closer to the index's per-chunk calls (more calls with fewer identifiers each).
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
        _fastterms.configure(tokens.normalize_word, tokens.term_hash.__wrapped__)


def first_sight(texts: list[str], repeat: int) -> tuple[int, float, float]:
    """Distinct identifiers, and the best of repeat cold seconds to give each its terms and own hash once.

    Python: identifier_terms() and term_hash() of each. Native: one identifier_counts() of all of them, which
    fills the identifier cache (terms and hash) and calls normalize_word() once per distinct word part. Every
    cache is emptied before each run; runs alternate, so load on a shared machine hits both alike.
    """
    idents = sorted({m for t in texts for m in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t)})
    joined = " ".join(idents)
    python, native = [], []
    for _ in range(max(1, repeat)):
        clear_caches()
        start = time.perf_counter()
        for ident in idents:
            tokens.identifier_terms(ident)
            tokens.term_hash(ident)
        python.append(time.perf_counter() - start)
        clear_caches()
        start = time.perf_counter()
        _fastterms.identifier_counts(joined)
        native.append(time.perf_counter() - start)
        assert _fastterms.cache_size() == len(idents)
    return len(idents), min(python), min(native)


def timed(run: Run, texts: list[str], extras: list[list[int]]) -> tuple[float, list[object]]:
    """Seconds of one pass over all texts, and its results."""
    start = time.perf_counter()
    out = run(texts, extras)
    return time.perf_counter() - start, out


def compare(
    label: str, python: Run, native: Run, texts: list[str], extras: list[list[int]], repeat: int
) -> float:
    """Print cold and best warm seconds of both versions and their ratio; returns the warm ratio (0 if outputs differ)."""
    clear_caches()
    py_cold, py_out = timed(python, texts, extras)
    clear_caches()
    c_cold, c_out = timed(native, texts, extras)
    py_warm, c_warm = [], []
    for _ in range(max(1, repeat)):  # interleaved, so load on a shared machine hits both alike
        py_warm.append(timed(python, texts, extras)[0])
        c_warm.append(timed(native, texts, extras)[0])
    identical = py_out == c_out
    ratio = min(py_warm) / min(c_warm)
    print(
        f"{label:32} python: cold {py_cold:.3f} s, warm best {min(py_warm):.3f} s | "
        f"native: cold {c_cold:.3f} s, warm best {min(c_warm):.3f} s | "
        f"native {ratio:.1f}x warm, {py_cold / c_cold:.1f}x cold | identical: {'yes' if identical else 'NO'}"
    )
    return ratio if identical else 0.0


def chunk_terms_run(chunk_terms: Callable) -> Run:
    """One pass of chunk_terms over all texts with their extras."""
    return lambda texts, extras: [chunk_terms(t, e) for t, e in zip(texts, extras, strict=True)]


def identifier_counts_run(identifier_counts: Callable) -> Run:
    """One pass of identifier_counts over all texts."""
    return lambda texts, extras: [identifier_counts(t) for t in texts]


def pieces(texts: list[str], extras: list[list[int]]) -> tuple[list[str], list[list[int]]]:
    """The texts cut before each def/class line (roughly the index's chunks), each with its file's extras."""
    out: list[str] = []
    out_extras: list[list[int]] = []
    for text, extra in zip(texts, extras, strict=True):
        parts = re.split(r"\n(?=[ \t]*(?:async def|def|class) )", text)
        out.extend(parts)
        out_extras.extend([extra] * len(parts))
    return out, out_extras


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
    piece_texts, piece_extras = pieces(texts, extras)
    print(
        f"code base: {args.package}, {len(texts)} .py files, {sum(map(len, texts)):,} characters, "
        f"{len(piece_texts):,} def/class pieces"
    )
    n_idents, py_sight, c_sight = first_sight(texts, min(args.repeat, 3))
    print(
        f"first sight of {n_idents:,} distinct identifiers (best of {min(args.repeat, 3)} cold runs): "
        f"python (identifier_terms + term_hash) {py_sight:.3f} s"
        f" | native {c_sight:.3f} s ({_fastterms.word_cache_size():,} word parts) | native {py_sight / c_sight:.1f}x"
        f" [target: native >= 3x: {'met' if py_sight >= 3 * c_sight else 'NOT met'}]"
    )
    py_ct, c_ct = chunk_terms_run(tokens.py_chunk_terms), chunk_terms_run(_fastterms.chunk_terms)
    files = compare("chunk_terms, whole files", py_ct, c_ct, texts, extras, args.repeat)
    compare("chunk_terms, def/class pieces", py_ct, c_ct, piece_texts, piece_extras, args.repeat)
    py_ic, c_ic = (
        identifier_counts_run(tokens.py_identifier_counts),
        identifier_counts_run(_fastterms.identifier_counts),
    )
    counts = compare("identifier_counts, whole files", py_ic, c_ic, texts, extras, args.repeat)
    print(f"target: native chunk_terms >= 10x on whole files (warm): {'met' if files >= 10 else 'NOT met'}")
    return 0 if files >= 10 and counts > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
