"""Query files that inherit patterns: ecma.scm (what JavaScript and TypeScript share) and jsx.scm are fragments."""

from __future__ import annotations

import re

import pytest

from lsp_agent.index.chunking import file_symbols
from lsp_agent.index.languages import QUERY_DIR, language_specs, load_language

SHARED = """import Default, { named, other as alias } from "./mod";
const handler = (event) => dispatch(event);
var legacy = function () { return new Widget(); };
export const LIMIT = 10;
let counter = 0;
function run() {
  const inner = () => helpers.format(LIMIT);
  return new ui.Panel(inner());
}
"""
# (role, kind, name) of every symbol SHARED yields through ecma.scm's patterns, in JS and TS alike
SHARED_SYMBOLS = {
    ("reference", "import", "Default"),
    ("reference", "import", "named"),
    ("reference", "import", "other"),
    ("definition", "function", "handler"),
    ("reference", "call", "dispatch"),
    ("definition", "function", "legacy"),
    ("reference", "class", "Widget"),
    ("definition", "constant", "LIMIT"),
    ("definition", "constant", "counter"),
    ("definition", "function", "run"),
    ("definition", "function", "inner"),
    ("reference", "call", "format"),
    ("reference", "class", "Panel"),
    ("reference", "call", "inner"),
}


def _patterns(text: str) -> list[str]:
    """The top-level patterns of a query file (blocks between blank lines, comments left out), whitespace-normalised."""
    blocks = re.split(r"\n\s*\n", "\n".join(line for line in text.splitlines() if not line.startswith(";")))
    return [" ".join(block.split()) for block in blocks if block.strip()]


def test_fragments_are_inherited_not_languages() -> None:
    assert not {"ecma", "jsx"} & set(language_specs())
    ecma, jsx = ((QUERY_DIR / f"{name}.scm").read_text(encoding="utf-8") for name in ("ecma", "jsx"))
    for name, with_jsx in (("javascript", True), ("typescript", False), ("tsx", True)):
        loaded = load_language(name)
        assert loaded is not None
        assert loaded.query_text.startswith(ecma) and loaded.query_text.count(ecma) == 1
        assert loaded.query_text.count(jsx) == with_jsx, name


def test_no_pattern_is_written_twice() -> None:
    files = {
        name: _patterns((QUERY_DIR / f"{name}.scm").read_text())
        for name in ("ecma", "jsx", "javascript", "typescript", "tsx")
    }
    seen: dict[str, str] = {}
    for name, patterns in files.items():
        for pattern in patterns:
            assert pattern not in seen, f"{name}.scm repeats a pattern of {seen.get(pattern)}.scm: {pattern}"
            seen[pattern] = name


@pytest.mark.parametrize("path", ["web/app.js", "web/app.ts", "web/app.tsx"])
def test_shared_patterns_capture_the_same_symbols_in_js_and_ts(path: str) -> None:
    got = {(s.role, s.kind, s.name) for s in file_symbols(path, SHARED)}
    assert got == SHARED_SYMBOLS  # the same in all three grammars, nothing more


def test_typescript_keeps_its_own_patterns_beside_the_shared_ones() -> None:
    text = SHARED + "interface Shape { area(): number }\nclass Box extends Base implements Shape {}\n"
    got = {(s.role, s.kind, s.name) for s in file_symbols("web/shapes.ts", text)}
    assert SHARED_SYMBOLS <= got
    assert {
        ("definition", "interface", "Shape"),
        ("definition", "method", "area"),
        ("definition", "class", "Box"),
        ("reference", "class", "Base"),
        ("reference", "implementation", "Shape"),
    } <= got
