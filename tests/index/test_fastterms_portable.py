"""The C tokenizer's portable scanner (built with -DFT_PORTABLE, as on CPUs without SSE2) against tokens.py."""

from __future__ import annotations

import pickle
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from test_fastterms import EDGE_TEXTS, TRICKY_IDENTIFIERS, _random_text

from lsp_agent.index.tokens import identifier_terms, py_chunk_terms, py_identifier_counts, term_hash

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "lsp_agent" / "index"
SUFFIXES = {
    ".py",
    ".js",
    ".jsx",
    ".ts",
    ".tsx",
    ".go",
    ".rs",
    ".java",
    ".c",
    ".h",
    ".cpp",
    ".scm",
    ".md",
    ".lua",
}

pytestmark = pytest.mark.slow

BUILD = """
import sys
from setuptools import Extension, setup
src = sys.argv.pop(1)
setup(
    name="portable-fastterms",
    ext_modules=[Extension("_fastterms", [f"{src}/_fastterms.c", f"{src}/_ft_words.c"],
                           define_macros=[("FT_PORTABLE", "1")], extra_compile_args=["-Werror"])],
    script_args=sys.argv[1:],
)
"""

# Runs in a fresh interpreter with LSP_AGENT_NO_NATIVE=1: the installed extension stays unloaded, the portable
# one is loaded from the build folder and configured with the same callables tokens.py gives the installed one.
RUN = """
import importlib.util, pickle, sys
from lsp_agent.index import tokens
path, texts_file, out_file = sys.argv[1:]
spec = importlib.util.spec_from_file_location("_fastterms", path)
ft = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ft)
ft.configure(tokens.normalize_word, tokens.term_hash.__wrapped__)
texts, extras, idents = pickle.loads(open(texts_file, "rb").read())
result = {
    "scanner": ft.SCANNER,
    "chunk_terms": [ft.chunk_terms(t, e) for t, e in zip(texts, extras)],
    "identifier_counts": [ft.identifier_counts(t) for t in texts],
    "identifier_terms": [ft.identifier_terms(i) for i in idents],
}
open(out_file, "wb").write(pickle.dumps(result))
"""


def _corpus() -> tuple[list[str], list[list[int]], list[str]]:
    """Texts of every kind (source in several languages, edge cases, random mixes), their extras, identifiers."""
    files = [
        p
        for top in ("lsp_agent", "tests", "editor-clients")
        for p in sorted((REPO / top).rglob("*"))
        if p.suffix in SUFFIXES and p.is_file() and "node_modules" not in p.parts
    ]
    texts = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in files]
    rng = random.Random(20261124)
    texts += EDGE_TEXTS + [_random_text(rng) for _ in range(400)]
    extras = [[term_hash("path"), rng.randrange(-(2**47), 2**47)] if i % 3 else [] for i in range(len(texts))]
    return texts, extras, TRICKY_IDENTIFIERS


def _build_portable(tmp_path: Path) -> Path:
    """Compile the extension with -DFT_PORTABLE into tmp_path; its path."""
    build = subprocess.run(
        [sys.executable, "-c", BUILD, str(SOURCES), "build_ext", "--build-lib", str(tmp_path / "lib"),
         "--build-temp", str(tmp_path / "tmp")],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    (built,) = (tmp_path / "lib").glob("_fastterms*" + sysconfig.get_config_var("EXT_SUFFIX"))
    return built


@pytest.mark.skipif(shutil.which(sysconfig.get_config_var("CC") or "cc") is None, reason="no C compiler")
def test_portable_build_matches_python(tmp_path: Path) -> None:
    built = _build_portable(tmp_path)
    texts, extras, idents = _corpus()
    assert len(texts) > 500
    (tmp_path / "texts.pickle").write_bytes(pickle.dumps((texts, extras, idents)))
    env = {"LSP_AGENT_NO_NATIVE": "1", "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    args = [str(built), str(tmp_path / "texts.pickle"), str(tmp_path / "out.pickle")]
    run = subprocess.run([sys.executable, "-c", RUN, *args], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = pickle.loads((tmp_path / "out.pickle").read_bytes())
    assert result["scanner"] == "portable"
    for text, extra, got in zip(texts, extras, result["chunk_terms"], strict=True):
        assert got == py_chunk_terms(text, extra), repr(text[:80])
    for text, got in zip(texts, result["identifier_counts"], strict=True):
        assert got == py_identifier_counts(text), repr(text[:80])
    assert result["identifier_terms"] == [identifier_terms(i) for i in idents]
