"""Tree-sitter chunking: definitions with qualified names, skeletons, module code, windows, symbols."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.index import chunking
from lsp_agent.index.chunking import analyze, analyze_with_tree, file_symbols
from lsp_agent.index.tokens import term_hash, unpack_terms

SOURCE = '''"""Module docstring."""
import os

LIMIT = 10


# Explains the helper.
@functools.cache
def helper(value):
    def inner():
        return value
    return inner()


class Small(Base):
    kind = "small"

    def method(self):
        return helper(1)


if __name__ == "__main__":
    helper(os.getcwd())
'''


def _by_symbol(analysis):
    return {c.symbol: c for c in analysis.chunks}


def test_functions_classes_and_module_code_are_chunks() -> None:
    a = analyze("pkg/mod.py", SOURCE)
    assert a.language == "python"
    spans = [(c.start, c.end, c.symbol, c.kind) for c in a.chunks]
    assert spans == [
        (1, 4, None, "module"),
        (7, 12, "helper", "function"),  # the comment and decorator above belong to the function
        (15, 19, "Small", "class"),  # a small class stays whole, methods included
        (22, 23, None, "module"),
    ]
    assert a.chunks[1].text.startswith("# Explains the helper.\n@functools.cache\ndef helper")
    assert len(a.tokens) == len(a.chunks)


def test_symbols_definitions_with_qualified_names_and_references() -> None:
    a = analyze("pkg/mod.py", SOURCE)
    assert {s.role for s in a.symbols} == {"definition"}  # references are found on demand
    defs = {(s.qualified_name, s.kind, s.line, s.end_line) for s in a.symbols}
    assert defs == {
        ("LIMIT", "constant", 4, 4),
        ("helper", "function", 9, 12),
        ("helper.inner", "function", 10, 11),
        ("Small", "class", 15, 19),
        ("Small.kind", "attribute", 16, 16),
        ("Small.method", "method", 18, 19),
    }
    every = file_symbols("pkg/mod.py", SOURCE)
    assert [s for s in every if s.role == "definition"] == a.symbols
    refs = {(s.name, s.kind, s.line) for s in every if s.role == "reference"}
    assert {
        ("cache", "call", 8),
        ("inner", "call", 12),
        ("Base", "class", 15),
        ("helper", "call", 19),
    } <= refs
    assert ("getcwd", "call", 23) in refs


def test_deep_definitions_are_left_to_the_on_demand_pass() -> None:
    nested = "class A:\n    class B:\n        @property\n        def m(self):\n            def f():\n                pass\n"
    indexed = {s.qualified_name for s in analyze("deep.py", nested).symbols}
    assert indexed == {
        "A",
        "A.B",
        "A.B.m",
    }  # a decorated method of a nested class is as deep as indexing looks
    assert "A.B.m.f" in {s.qualified_name for s in file_symbols("deep.py", nested)}
    assert file_symbols("notes.txt", "def f(): pass") == []


def test_large_class_becomes_skeleton_plus_member_chunks(monkeypatch) -> None:
    monkeypatch.setattr(chunking, "MAX_CHUNK_CHARS", 300)
    methods = "".join(
        f"    def step_{i}(self, x):\n        '''Step {i}.'''\n"
        + "        x = x + 1\n" * 8
        + "        return x\n\n"
        for i in range(3)
    )
    source = "class Pipeline:\n    '''Runs steps.'''\n    name = 'p'\n\n" + methods
    a = analyze("pipeline.py", source)
    chunks = _by_symbol(a)
    skeleton = chunks["Pipeline"]
    assert (skeleton.kind, skeleton.start, skeleton.end) == ("class", 1, len(source.rstrip().splitlines()))
    assert "def step_1(self, x):" in skeleton.text and "'''Step 1.'''" in skeleton.text
    assert "x = x + 1" not in skeleton.text and "        ..." in skeleton.text
    assert "name = 'p'" in skeleton.text
    for i in range(3):
        member = chunks[f"Pipeline.step_{i}"]
        assert member.kind == "method"
        assert member.text.count("x = x + 1") == 8


def test_long_function_is_cut_into_windows() -> None:
    body = "".join(f"    value_{i} = {i}\n" for i in range(chunking.MAX_DEF_LINES + 20))
    a = analyze("long.py", "def long_one():\n" + body)
    pieces = [c for c in a.chunks if c.symbol == "long_one"]
    assert len(pieces) >= 2
    assert pieces[0].start == 1 and pieces[-1].end == chunking.MAX_DEF_LINES + 21
    assert all(c.end - c.start < chunking.WINDOW_LINES for c in pieces)


def test_files_without_grammar_fall_back_to_line_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(120))
    a = analyze("notes/readme.md", text)
    assert a.language == "text" and a.symbols == []
    assert [(c.start, c.end, c.kind) for c in a.chunks] == [
        (1, 50, "lines"),
        (51, 100, "lines"),
        (101, 120, "lines"),
    ]


def test_symbol_and_path_words_are_boosted_in_tokens() -> None:
    a = analyze("billing/invoice_totals.py", "def compute_tax(amount):\n    return amount * 0.2\n")
    tokens = unpack_terms(a.tokens[0][1])
    assert tokens[term_hash("compute_tax")] >= 2  # in the code and in the symbol field
    assert {term_hash(t) for t in ("bill", "invoice_totals", "invoic", "total")} <= set(tokens)


def test_syntax_errors_still_chunk() -> None:
    a = analyze("broken.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    assert any(c.symbol == "ok" for c in a.chunks)
    assert sum(c.end - c.start + 1 for c in a.chunks) >= 4


def test_incremental_parse_matches_a_fresh_parse() -> None:
    base = SOURCE * 3
    _, parsed = analyze_with_tree("mod.py", base)
    edits = [
        base + "\n\ndef appended():\n    return 2\n",
        "# new first line\n" + base,
        base.replace("def method(self):", "def renamed_method(self, extra):", 1),
        base[:200] + base[260:],
    ]
    for edited in edits:
        incremental, _ = analyze_with_tree("mod.py", edited, parsed)
        fresh = analyze("mod.py", edited)
        assert incremental == fresh


def test_line_numbers_follow_newlines_only() -> None:
    # Form feeds and other Unicode line breaks must not shift chunk lines away from tree-sitter's rows.
    a = analyze("ff.py", "x = 1\n\x0c\ndef after_form_feed():\n    return 'a\u2028b'\n")
    chunk = next(c for c in a.chunks if c.symbol == "after_form_feed")
    assert (chunk.start, chunk.end) == (3, 4)
    assert chunk.text.startswith("def after_form_feed")


def test_long_class_without_methods_is_cut_into_windows() -> None:
    body = "".join(f"    CODE_{i} = {i}\n" for i in range(chunking.MAX_DEF_LINES + 30))
    a = analyze("codes.py", "class Codes(Enum):\n" + body)
    pieces = [c for c in a.chunks if c.symbol == "Codes"]
    assert len(pieces) >= 2 and all(c.kind == "class" for c in pieces)
    assert pieces[0].start == 1 and pieces[-1].end == chunking.MAX_DEF_LINES + 31


def test_a_language_is_a_grammar_package_plus_a_query_file(query_dir: Path) -> None:
    python_query = (Path(chunking.__file__).parent / "queries" / "python.scm").read_text()
    header_end = python_query.index("; Tag query")
    (query_dir / "snake.scm").write_text(
        "; grammar: tree_sitter_python.language\n; extensions: .snk\n" + python_query[header_end:]
    )
    (query_dir / "ghost.scm").write_text(
        "; grammar: tree_sitter_ghost_lang.language\n; extensions: .ghost\n(identifier) @name.reference.x\n"
    )
    a = analyze("pkg/tool.snk", "def run_tool(x):\n    return x\n")
    assert a.language == "snake" and [(c.symbol, c.kind) for c in a.chunks] == [("run_tool", "function")]
    assert analyze("tool.py", "def f():\n    pass\n").language == "text"  # python.scm is not in this folder
    ghost = analyze("spooky.ghost", "boo\n")  # grammar not installed: line windows, no error
    assert (ghost.language, [c.kind for c in ghost.chunks]) == ("text", ["lines"])
