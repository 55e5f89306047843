"""find_symbol, search and the repo map over workspaces mixing languages."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.index import WorkspaceIndex
from lsp_agent.index.chunking import analyze

POLYGLOT = Path(__file__).parent / "fixtures" / "polyglot"


@pytest.fixture(scope="module")
def polyglot_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceIndex]:
    """The polyglot fixtures (real code in eight languages), indexed."""
    root = tmp_path_factory.mktemp("ws") / "polyglot"
    shutil.copytree(POLYGLOT, root)
    with WorkspaceIndex(root, db_path=root.parent / "index.sqlite3") as index:
        index.refresh()
        yield index


def _hits(index: WorkspaceIndex, name: str) -> list[tuple[str, str, str, int]]:
    return [(h.role, h.kind, h.path, h.line) for h in index.find_symbol(name)]


@pytest.mark.parametrize(
    ("name", "definition", "reference"),
    [
        (
            "Comparator.parse",
            ("definition", "method", "js/comparator.js", 36),
            ("reference", "call", "js/comparator.js", 25),
        ),
        (
            "execFinalizer",
            ("definition", "function", "ts/Subscription.ts", 206),
            ("reference", "call", "ts/Subscription.ts", 80),
        ),
        (
            "QueryClientContext",
            ("definition", "constant", "tsx/QueryClientProvider.tsx", 8),
            ("reference", "jsx", "tsx/QueryClientProvider.tsx", 80),
        ),
        (
            "callers",
            ("definition", "function", "go/stack.go", 163),
            ("reference", "call", "go/errors.go", 105),
        ),
        (
            "StripPrefixExt",
            ("definition", "trait", "rust/backport.rs", 2),
            ("reference", "implementation", "rust/backport.rs", 7),
        ),
        (
            "Pool",
            ("definition", "class", "java/JPypeReferenceSet.java", 121),
            ("reference", "class", "java/JPypeReferenceSet.java", 56),
        ),
        (
            "escape_unicode_kind1",
            ("definition", "function", "c/_speedups.c", 74),
            ("reference", "call", "c/_speedups.c", 163),
        ),
        (
            "Keyset::push_back",
            ("definition", "method", "cpp/keyset.cc", 13),
            ("reference", "call", "cpp/keyset.h", 27),
        ),
    ],
)
def test_find_symbol_in_each_language(
    polyglot_index: WorkspaceIndex, name: str, definition: tuple, reference: tuple
) -> None:
    hits = _hits(polyglot_index, name)
    assert hits[0] == definition
    assert reference in hits
    assert hits.index(reference) > max(i for i, h in enumerate(hits) if h[0] == "definition")


def test_find_symbol_qualified_across_header_and_source(polyglot_index: WorkspaceIndex) -> None:
    # Prototypes in the class (keyset.h) and definitions outside it (keyset.cc) share one qualified name.
    by_colons = polyglot_index.find_symbol("Keyset::reserve")
    assert [(h.path, h.line, h.qualified_name) for h in by_colons if h.role == "definition"] == [
        ("cpp/keyset.cc", 105, "marisa.Keyset.reserve"),
        ("cpp/keyset.h", 76, "marisa.Keyset.reserve"),
    ]
    assert polyglot_index.find_symbol("marisa.Keyset.reserve")[:2] == by_colons[:2]
    go = polyglot_index.find_symbol("withStack.Format")
    assert [(h.role, h.path, h.line, h.snippet) for h in go][0] == (
        "definition",
        "go/errors.go",
        165,
        "func (w *withStack) Format(s fmt.State, verb rune) {",
    )


@pytest.mark.parametrize(
    ("query", "path", "symbol"),
    [
        ("Comparator intersects", "js/comparator.js", "Comparator.intersects"),
        ("unsubscribe finalizers", "ts/Subscription.ts", "Subscription.unsubscribe"),
        ("query client provider", "tsx/QueryClientProvider.tsx", "QueryClientProvider"),
        ("wrap error stack trace", "go/errors.go", "Wrap"),
        ("quoted char display", "rust/error.rs", "QuotedChar"),
        ("reference set pool flush", "java/JPypeReferenceSet.java", "JPypeReferenceSet.flush"),
        ("escape unicode", "c/_speedups.c", "escape_unicode"),
        ("reserve key blocks", "cpp/keyset.cc", "marisa.Keyset.reserve"),
    ],
)
def test_search_finds_the_chunk_in_a_mixed_workspace(
    polyglot_index: WorkspaceIndex, query: str, path: str, symbol: str
) -> None:
    hits = polyglot_index.search(query, top_k=3)
    assert (path, symbol) in [(h.path, h.symbol) for h in hits]
    assert hits[0].path == path  # the other languages' files do not crowd it out


def test_repo_map_and_find_symbol_across_go_and_typescript(tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    (tmp_path / "server/server.go").write_text(
        "package server\n\n// Server answers requests.\ntype Server struct {\n\tAddr string\n}\n\n"
        "// NewServer makes a Server listening on addr.\nfunc NewServer(addr string) *Server {\n"
        "\treturn &Server{Addr: addr}\n}\n\n// Start listens.\nfunc (s *Server) Start() error {\n\treturn nil\n}\n"
    )
    (tmp_path / "main.go").write_text(
        'package main\n\nimport "example.com/app/server"\n\nfunc main() {\n'
        '\tsrv := server.NewServer(":8080")\n\tsrv.Start()\n}\n'
    )
    (tmp_path / "web").mkdir()
    (tmp_path / "web/cart.ts").write_text(
        "export class ShoppingCart {\n  private items: string[] = [];\n\n"
        "  addItem(sku: string): void {\n    this.items.push(sku);\n  }\n}\n"
    )
    (tmp_path / "web/checkout.ts").write_text(
        'import { ShoppingCart } from "./cart";\n\nexport function checkout(): ShoppingCart {\n'
        '  const cart = new ShoppingCart();\n  cart.addItem("book");\n  return cart;\n}\n'
    )
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    with WorkspaceIndex(tmp_path, db_path=tmp_path.parent / "map.sqlite3") as index:
        index.refresh()
        text = index.repo_map()
        files = [line[:-1] for line in text.splitlines() if not line.startswith(" ")]
        # The files others use come first.
        assert set(files[:2]) == {"server/server.go", "web/cart.ts"}
        assert "  4: type Server struct {" in text and "  1: export class ShoppingCart {" in text
        assert _hits(index, "ShoppingCart") == [
            ("definition", "class", "web/cart.ts", 1),
            ("reference", "import", "web/checkout.ts", 1),
            ("reference", "type", "web/checkout.ts", 3),
            ("reference", "class", "web/checkout.ts", 4),
        ]
        assert _hits(index, "Server.Start") == [
            ("definition", "method", "server/server.go", 14),
            ("reference", "call", "main.go", 7),
        ]
        assert _hits(index, "NewServer")[1] == ("reference", "call", "main.go", 6)


def test_a_bad_query_header_is_skipped_with_a_warning(
    query_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (query_dir / "broken.scm").write_text(
        "; grammar: tree_sitter_go.language\n; extensions: .go\n; max-depth: deep\n(identifier) @name.reference.x\n"
    )
    with caplog.at_level(logging.WARNING):
        a = analyze("main.go", "package main\n\nfunc main() {}\n")
    assert a.language == "text" and "broken.scm has a bad header value" in caplog.text


def test_a_query_inherits_another_and_claims_files_by_content(query_dir: Path) -> None:
    (query_dir / "base.scm").write_text(
        "; grammar: tree_sitter_c.language\n; extensions: .c .h\n"
        "(function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function))"
        " @definition.function\n"
    )
    (query_dir / "plus.scm").write_text(
        "; grammar: tree_sitter_cpp.language\n; extensions: .cpp\n; inherits: base\n; detect .h: ^class\\b\n"
        "(class_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class\n"
    )
    plain = analyze("a.h", "int twice(int x) {\n  return 2 * x;\n}\n")
    classy = analyze("b.h", "class Twice {\n};\nint twice(int x) {\n  return 2 * x;\n}\n")
    assert plain.language == "base" and classy.language == "plus"
    assert [(s.kind, s.name) for s in classy.symbols] == [("class", "Twice"), ("function", "twice")]
