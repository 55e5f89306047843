"""Definitions and chunks of real code in each language with a grammar (tests/index/fixtures/polyglot)."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.index.chunking import analyze, file_symbols
from lsp_agent.index.models import FileAnalysis

POLYGLOT = Path(__file__).parent / "fixtures" / "polyglot"
MEMBER_KINDS = ("field", "constant", "variant", "variable")  # checked apart: there are many


def _analyze(rel: str) -> FileAnalysis:
    return analyze(rel, (POLYGLOT / rel).read_text(encoding="utf-8"))


def _definitions(a: FileAnalysis) -> list[tuple[str, str | None, int, int]]:
    return [(s.kind, s.qualified_name, s.line, s.end_line) for s in a.symbols if s.kind not in MEMBER_KINDS]


def _members(a: FileAnalysis) -> list[tuple[str, str | None, int]]:
    return [(s.kind, s.qualified_name, s.line) for s in a.symbols if s.kind in MEMBER_KINDS]


def _chunks(a: FileAnalysis) -> list[tuple[str | None, str, int, int]]:
    return [(c.symbol, c.kind, c.start, c.end) for c in a.chunks]


def _chunk(a: FileAnalysis, symbol: str) -> str:
    return next(c.text for c in a.chunks if c.symbol == symbol)


def test_javascript_class_methods_and_module_code() -> None:
    a = _analyze("js/comparator.js")
    assert a.language == "javascript"
    methods = ["ANY", "constructor", "parse", "toString", "test", "intersects"]
    spans = [(6, 8), (10, 34), (36, 55), (57, 59), (61, 77), (79, 133)]
    assert _definitions(a) == [("class", "Comparator", 5, 134)] + [
        ("method", f"Comparator.{m}", s, e) for m, (s, e) in zip(methods, spans, strict=True)
    ]
    assert _members(a) == [
        ("constant", name, line)
        for name, line in [("ANY", 3), ("parseOptions", 138), ("cmp", 140), ("debug", 141)]
        + [("SemVer", 142), ("Range", 143)]
    ]
    # The class is larger than a chunk: a skeleton (from its leading comment) plus one chunk per method.
    assert _chunks(a) == [(None, "module", 1, 3), ("Comparator", "class", 4, 134)] + [
        (f"Comparator.{m}", "method", s, e) for m, (s, e) in zip(methods, spans, strict=True)
    ] + [(None, "module", 136, 143)]
    skeleton = _chunk(a, "Comparator")
    assert skeleton.startswith("// hoisted class for cyclic dependency\nclass Comparator {\n")
    assert "  parse (comp) {\n    ...\n  }\n" in skeleton and "this.parse(comp)" not in skeleton
    assert _chunk(a, "Comparator.parse").startswith("  parse (comp) {\n")


def test_typescript_class_fields_functions_and_doc_comments() -> None:
    a = _analyze("ts/Subscription.ts")
    assert a.language == "typescript"
    assert _definitions(a) == [
        ("class", "Subscription", 16, 195),
        ("method", "Subscription.constructor", 40, 40),
        ("method", "Subscription.unsubscribe", 47, 96),
        ("method", "Subscription.add", 116, 136),
        ("method", "Subscription._hasParent", 143, 146),
        ("method", "Subscription._addParent", 155, 158),
        ("method", "Subscription._removeParent", 164, 171),
        ("method", "Subscription.remove", 187, 194),
        ("function", "isSubscription", 199, 204),
        ("function", "execFinalizer", 206, 212),
    ]
    assert _members(a) == [
        ("field", "Subscription.EMPTY", 17),
        ("field", "Subscription.closed", 26),
        ("field", "Subscription._parentage", 28),
        ("field", "Subscription._finalizers", 34),
        ("constant", "EMPTY_SUBSCRIPTION", 197),
    ]
    chunks = _chunks(a)
    assert chunks[:3] == [
        (None, "module", 1, 4),
        ("Subscription", "class", 6, 195),  # its JSDoc comment above `export class` belongs to it
        ("Subscription.constructor", "method", 36, 40),
    ]
    assert chunks[-3:] == [
        (None, "module", 197, 197),
        ("isSubscription", "function", 199, 204),
        ("execFinalizer", "function", 206, 212),
    ]
    assert "  unsubscribe(): void {\n    ...\n  }" in _chunk(a, "Subscription")


def test_tsx_components_hooks_and_jsx_references() -> None:
    rel = "tsx/QueryClientProvider.tsx"
    a = _analyze(rel)
    assert a.language == "tsx"
    assert _definitions(a) == [
        ("function", "useQueryClient", 20, 32),
        ("type", "QueryClientProviderProps", 37, 48),
        ("function", "QueryClientProvider", 68, 84),
    ]
    assert _members(a) == [("constant", "QueryClientContext", 8)]
    assert _chunks(a) == [
        (None, "module", 1, 10),
        ("useQueryClient", "function", 12, 32),
        (None, "module", 34, 48),
        ("QueryClientProvider", "function", 50, 84),
    ]
    refs = {
        (s.name, s.kind, s.line)
        for s in file_symbols(rel, (POLYGLOT / rel).read_text())
        if s.role == "reference"
    }
    assert {("QueryClientContext", "jsx", 80), ("Provider", "jsx", 80), ("useEffect", "call", 72)} <= refs
    assert ("QueryClientProviderProps", "type", 71) in refs
    assert ("QueryClientProviderProps", "type", 37) not in refs  # a definition's own name is no reference


def test_go_receiver_methods_structs_and_interfaces() -> None:
    a = _analyze("go/errors.go")
    assert a.language == "go"
    definitions = _definitions(a)
    assert definitions[:8] == [
        ("function", "New", 102, 107),
        ("function", "Errorf", 112, 117),
        ("struct", "fundamental", 120, 123),
        ("method", "fundamental.Error", 125, 125),  # func (f *fundamental) Error()
        ("method", "fundamental.Format", 127, 141),
        ("function", "WithStack", 145, 153),
        ("struct", "withStack", 155, 158),
        ("method", "withStack.Cause", 160, 160),
    ]
    assert definitions[-2:] == [("function", "Cause", 275, 288), ("interface", "Cause.causer", 276, 278)]
    assert len(definitions) == 21
    assert _members(a) == [
        ("field", "fundamental.msg", 121),
        ("field", "withMessage.cause", 240),
        ("field", "withMessage.msg", 241),
    ]
    chunks = _chunks(a)
    assert chunks[:4] == [
        (None, "module", 1, 50),  # the package documentation, in windows
        (None, "module", 51, 98),
        ("New", "function", 100, 107),  # from its doc comment
        ("Errorf", "function", 109, 117),
    ]
    assert ("withMessage.Unwrap", "method", 247, 248) in chunks

    stack = _analyze("go/stack.go")
    assert _definitions(stack)[:3] == [
        ("type", "Frame", 15, 15),
        ("method", "Frame.pc", 19, 19),  # func (f Frame) pc(): a value receiver
        ("method", "Frame.file", 23, 30),
    ]
    assert ("method", "stack.StackTrace", 155, 161) in _definitions(stack)


def test_rust_traits_impls_modules_and_attributes() -> None:
    a = _analyze("rust/backport.rs")
    assert a.language == "rust"
    assert _definitions(a) == [
        ("trait", "StripPrefixExt", 2, 4),
        ("method", "StripPrefixExt.strip_prefix", 3, 3),
        ("impl", "str", 7, 15),  # impl StripPrefixExt for str
        ("method", "str.strip_prefix", 8, 14),
        ("module", "alloc", 20, 60),
        ("module", "alloc.alloc", 23, 59),
        ("struct", "alloc.alloc.Layout", 28, 30),
        ("impl", "alloc.alloc.Layout", 32, 37),
        ("method", "alloc.alloc.Layout.from_size_align_unchecked", 33, 36),
        ("function", "alloc.alloc.alloc", 39, 46),
        ("function", "alloc.alloc.dealloc", 48, 51),
        ("function", "alloc.alloc.handle_alloc_error", 53, 58),
    ]
    # Modules open up: their items are chunks, each with the #[...] attributes and comments above it.
    assert _chunks(a) == [
        ("StripPrefixExt", "trait", 1, 4),
        ("str", "impl", 6, 15),
        (None, "module", 17, 25),
        ("alloc.alloc.Layout", "struct", 27, 30),
        ("alloc.alloc.Layout", "impl", 32, 37),
        ("alloc.alloc.alloc", "function", 39, 46),
        ("alloc.alloc.dealloc", "function", 48, 51),
        ("alloc.alloc.handle_alloc_error", "function", 53, 58),
        (None, "module", 59, 60),
    ]
    assert _chunk(a, "alloc.alloc.Layout").lstrip().startswith("#[derive(Copy, Clone)]\n")

    errors = _analyze("rust/error.rs")
    assert _definitions(errors)[:5] == [
        ("enum", "ErrorKind", 4, 16),
        ("enum", "Position", 19, 25),
        ("impl", "Error", 29, 29),
        ("impl", "Error", 31, 88),
        ("method", "Error.fmt", 32, 87),
    ]
    assert ("variant", "ErrorKind.UnexpectedEnd", 5) in _members(errors)
    # A large impl block: a skeleton with the method body elided, then the method.
    assert [c for c in _chunks(errors) if c[2] >= 31][:2] == [
        ("Error", "impl", 31, 88),
        ("Error.fmt", "method", 32, 87),
    ]
    assert _chunk(errors, "Error").count("\n") < 10


def test_java_nested_classes_enums_interfaces() -> None:
    a = _analyze("java/JPypeReferenceSet.java")
    assert a.language == "java"
    assert _definitions(a) == [
        ("class", "JPypeReferenceSet", 24, 148),
        ("method", "JPypeReferenceSet.JPypeReferenceSet", 32, 34),
        ("method", "JPypeReferenceSet.size", 36, 39),
        ("method", "JPypeReferenceSet.add", 48, 75),
        ("method", "JPypeReferenceSet.remove", 82, 90),
        ("method", "JPypeReferenceSet.flush", 99, 118),
        ("class", "JPypeReferenceSet.Pool", 121, 146),
        ("method", "JPypeReferenceSet.Pool.Pool", 128, 131),
        ("method", "JPypeReferenceSet.Pool.add", 133, 139),
        ("method", "JPypeReferenceSet.Pool.remove", 141, 145),
    ]
    assert ("field", "JPypeReferenceSet.SIZE", 27) in _members(a)
    assert _chunks(a)[1:] == [
        ("JPypeReferenceSet", "class", 20, 148),
        ("JPypeReferenceSet.JPypeReferenceSet", "method", 32, 34),
        ("JPypeReferenceSet.size", "method", 36, 39),
        ("JPypeReferenceSet.add", "method", 41, 75),
        ("JPypeReferenceSet.remove", "method", 77, 90),
        ("JPypeReferenceSet.flush", "method", 92, 118),
        ("JPypeReferenceSet.Pool", "class", 120, 146),
    ]
    # Braces on their own line: the skeleton keeps the signature and the brace lines around `...`.
    assert "  void flush()\n  {\n    ...\n  }" in _chunk(a, "JPypeReferenceSet")

    enum = _analyze("java/ModifierCode.java")
    assert _definitions(enum)[0] == ("enum", "ModifierCode", 28, 82)
    assert ("constant", "ModifierCode.BEAN_MUTATOR", 54) in _members(enum)
    # An interface of bodiless methods: its methods are symbols, the interface one chunk.
    handler = _analyze("java/HtmlHandler.java")
    assert [d[1] for d in _definitions(handler)][:3] == [
        "HtmlHandler",
        "HtmlHandler.cdata",
        "HtmlHandler.comment",
    ]
    assert _chunks(handler) == [(None, "module", 1, 16), ("HtmlHandler", "interface", 18, 39)]


def test_c_functions_macros_and_variables() -> None:
    a = _analyze("c/_speedups.c")
    assert a.language == "c"
    assert _definitions(a) == [
        ("macro", "GET_DELTA", 3, 16),
        ("macro", "DO_ESCAPE", 18, 72),
        ("function", "escape_unicode_kind1", 74, 98),
        ("function", "escape_unicode_kind2", 100, 123),
        ("function", "escape_unicode_kind4", 126, 149),
        ("function", "escape_unicode", 151, 171),
        ("function", "PyInit__speedups", 196, 200),
    ]
    assert _members(a) == [
        ("variable", "module_methods", 173),
        ("variable", "module_slots", 178),
        ("variable", "module_definition", 188),
    ]
    assert _chunks(a) == [
        (None, "module", 1, 50),
        (None, "module", 51, 72),
        ("escape_unicode_kind1", "function", 74, 98),
        ("escape_unicode_kind2", "function", 100, 123),
        ("escape_unicode_kind4", "function", 126, 149),
        ("escape_unicode", "function", 151, 171),
        (None, "module", 173, 194),
        ("PyInit__speedups", "function", 196, 200),
    ]


def test_cpp_header_class_and_out_of_line_methods() -> None:
    header = _analyze("cpp/keyset.h")
    assert header.language == "cpp"  # a .h file with a namespace and a class
    definitions = _definitions(header)
    assert definitions[:4] == [
        ("namespace", "marisa", 10, 87),
        ("class", "marisa.Keyset", 12, 85),
        ("method", "marisa.Keyset.Keyset", 20, 20),
        ("method", "marisa.Keyset.push_back", 22, 22),
    ]
    assert ("method", "marisa.Keyset.operator[]", 33, 36) in definitions
    assert definitions[-1] == ("method", "marisa.Keyset.operator=", 84, 84)
    assert ("field", "marisa.Keyset.total_length_", 74) in _members(header)
    # The namespace opens up; the class is a skeleton plus its inline methods (prototypes stay in the skeleton).
    assert _chunks(header) == [
        (None, "module", 1, 10),
        ("marisa.Keyset", "class", 12, 85),
        ("marisa.Keyset.push_back", "method", 26, 28),
        ("marisa.Keyset.operator[]", "method", 33, 36),
        ("marisa.Keyset.operator[]", "method", 37, 40),
        ("marisa.Keyset.num_keys", "method", 42, 44),
        ("marisa.Keyset.empty", "method", 46, 48),
        ("marisa.Keyset.size", "method", 49, 51),
        ("marisa.Keyset.total_length", "method", 52, 54),
        (None, "module", 87, 89),
    ]
    skeleton = _chunk(header, "marisa.Keyset")
    assert (
        "  void push_back(const char *str);\n" in skeleton
        and "  bool empty() const {\n    ...\n  }" in skeleton
    )

    source = _analyze("cpp/keyset.cc")
    assert _definitions(source)[:3] == [
        ("namespace", "marisa", 5, 181),
        ("method", "marisa.Keyset.Keyset", 7, 11),  # Keyset::Keyset(): the scope makes it a method
        ("method", "marisa.Keyset.push_back", 13, 26),
    ]
    assert ("marisa.Keyset.reserve", "method", 105, 121) in _chunks(source)
