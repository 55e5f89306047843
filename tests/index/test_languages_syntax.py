"""Language choice, window fallback, qualified names and incremental parses beyond Python, on small snippets."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.index.chunking import analyze, analyze_with_tree

POLYGLOT = Path(__file__).parent / "fixtures" / "polyglot"


def test_incremental_parse_matches_a_fresh_one_in_other_languages() -> None:
    for rel, edit in [
        ("go/stack.go", ("func callers() *stack {", "func callers(skip int) *stack {")),
        (
            "ts/Subscription.ts",
            ("  add(teardown: TeardownLogic): void {", "  addOne(teardown: TeardownLogic): void {"),
        ),
        ("cpp/keyset.cc", ("void Keyset::clear() {", "void Keyset::clear_all() {")),
    ]:
        base = (POLYGLOT / rel).read_text()
        _, parsed = analyze_with_tree(rel, base)
        edited = base.replace(*edit, 1) + "\n// appended\n"
        incremental, _ = analyze_with_tree(rel, edited, parsed)
        assert incremental == analyze(rel, edited)


@pytest.mark.parametrize(
    ("rel", "text", "language"),
    [
        (
            "include/point.h",
            "#include <stdio.h>\ntypedef struct { int x; } point_t;\nint norm(point_t p);\n",
            "c",
        ),
        ("include/point.h", "namespace geo {\nclass Point {\n public:\n  int x;\n};\n}\n", "cpp"),
        ("include/box.h", "template <typename T>\nstruct Box { T value; };\n", "cpp"),
        ("src/app.kt", 'fun main() {\n    println("hi")\n}\n', "text"),
    ],
)
def test_header_language_by_content_and_window_fallback(rel: str, text: str, language: str) -> None:
    a = analyze(rel, text)
    assert a.language == language
    if language == "text":  # no grammar for Kotlin: line windows, no symbols
        assert [(c.kind, c.start, c.end) for c in a.chunks] == [("lines", 1, 3)] and a.symbols == []


def test_typescript_declaration_files_and_namespaces() -> None:
    text = (
        'declare module "foo" {\n  export function bar(x: number): string;\n  export class Baz {\n    qux(): void;\n'
        "  }\n}\nnamespace A.B {\n  export function d() {\n    return 2;\n  }\n}\n"
    )
    a = analyze("types/foo.d.ts", text)
    assert [(s.kind, s.qualified_name, s.line) for s in a.symbols] == [
        ("module", "foo", 1),
        ("function", "foo.bar", 2),  # a signature: a symbol, no chunk
        ("class", "foo.Baz", 3),
        ("method", "foo.Baz.qux", 4),
        ("namespace", "A.B", 7),
        ("function", "A.B.d", 8),
    ]
    # Modules and namespaces open up: their members are chunked, the lines around them are module code.
    assert [(c.symbol, c.kind, c.start, c.end) for c in a.chunks] == [
        (None, "module", 1, 2),
        ("foo.Baz", "class", 3, 5),
        (None, "module", 6, 7),
        ("A.B.d", "function", 8, 10),
        (None, "module", 11, 11),
    ]


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        (  # a typedef'd anonymous struct takes the typedef's name; a tagged one keeps its tag beside the typedef
            "list.c",
            "typedef struct { int len; } span_t;\ntypedef struct node { struct node *next; } node_t;\n",
            [
                ("struct", "span_t", 1),
                ("field", "span_t.len", 1),
                ("type", "node_t", 2),
                ("struct", "node", 2),
                ("field", "node.next", 2),
            ],
        ),
        (  # generic impls and receivers qualify methods by the bare type name
            "wrap.rs",
            "impl<T: Clone> fmt::Display for Wrapper<T> {\n    fn fmt(&self) {}\n}\n",
            [("impl", "Wrapper", 1), ("method", "Wrapper.fmt", 2)],
        ),
        (
            "stack.go",
            "package s\n\nfunc (s *Stack[T]) Push(v T) {\n}\n",
            [("method", "Stack.Push", 3)],
        ),
        (  # a destructor and an operator defined outside their class, two scopes deep
            "a.cpp",
            "a::Box::~Box() {}\nBox &a::Box::operator=(const Box &) { return *this; }\n",
            [("method", "a.Box.~Box", 1), ("method", "a.Box.operator=", 2)],
        ),
    ],
)
def test_qualified_names_of_typedefs_generics_and_scopes(rel: str, text: str, expected: list) -> None:
    assert [(s.kind, s.qualified_name, s.line) for s in analyze(rel, text).symbols] == expected
