"""Exact names first: qualified, module-prefixed and `::` names, members of one-chunk classes, colliding names.

Each workspace reproduces a miss seen on held-out queries: a `Class.method` losing to a module-level function of
the same name in another file, and a method of a class small enough to be one chunk coming back as the whole
class instead of the method's own lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, SearchHit, WorkspaceIndex
from lsp_agent.index.exact import named_symbols
from lsp_agent.index.query import analyze_query

PYTHON = {
    "pkg/__init__.py": "",
    "pkg/loader.py": '''"""Loading configuration files."""


def load_config(path):
    """Load config: read the config file at path and load every config value of the config."""
    with open(path) as handle:
        return parse_config(handle.read())


def parse_config(text):
    """Parse config text into config values."""
    return dict(line.split("=", 1) for line in text.splitlines())
''',
    "pkg/settings.py": '''"""Settings of the application."""

reload_everything = None  # a module value named like the method: the method comes first


class Settings:
    """Application settings."""

    def __init__(self, values):
        self.values = values

    # Reads the file first.
    @classmethod
    def load_config(cls, path):
        """Settings from a file."""
        return cls({})

    def reload_everything(self):
        self.values.clear()
''',
    "pkg/formats/__init__.py": "",
    "pkg/formats/json_format.py": 'import json\n\n\ndef parse(text):\n    """Parse JSON text."""\n    return json.loads(text)\n',
    "pkg/formats/yaml_format.py": '"""YAML."""\n\n\ndef parse(text):\n    """Parse YAML text."""\n    return {}\n',
    "tests/test_settings.py": (
        "from pkg.loader import load_config\nfrom pkg.settings import Settings\n\n\n"
        "def test_load_config():\n    assert Settings.load_config('a') and load_config('a') and load_config('b')\n"
    ),
}

TYPESCRIPT = {
    "src/format.ts": (
        "// Render any node to text.\nexport function render(node: object): string {\n"
        "  // render the node, render its children\n  return JSON.stringify(node);\n}\n"
    ),
    "src/widget.ts": (
        "export class Widget {\n  constructor(private name: string) {}\n\n  // Draw the widget.\n"
        "  render(): string {\n    return `<div>${this.name}</div>`;\n  }\n}\n"
    ),
}

GO = {
    "internal/store/store.go": (
        "package store\n\n// Store keeps rows.\ntype Store struct {\n\tpath string\n}\n\n"
        "// Open opens the store at path and returns the opened store, ready to open tables.\n"
        "func Open(path string) *Store {\n\treturn &Store{path: path}\n}\n\n"
        "// Reopen after a close.\nfunc (s *Store) Open() error {\n\treturn nil\n}\n"
    ),
    "internal/cache/cache.go": (
        "package cache\n\n// Cache of rows.\ntype Cache struct{}\n\n"
        "// Open opens a cache.\nfunc Open(dir string) *Cache {\n\treturn &Cache{}\n}\n"
    ),
}

NATIVE = {
    "src/store.rs": (
        "pub struct Store {\n    path: String,\n}\n\nimpl Store {\n    pub fn open(path: &str) -> Store {\n"
        "        Store { path: path.to_string() }\n    }\n\n    pub fn path(&self) -> &str {\n"
        "        &self.path\n    }\n}\n"
    ),
    "src/lib.rs": "/// Open any path, open it now.\npub fn open(path: &str) -> bool {\n    !path.is_empty()\n}\n",
    "cpp/store.cpp": (
        "namespace db {\nclass Store {\n public:\n  void open(int mode);\n  int size() const { return n_; }\n"
        " private:\n  int n_;\n};\n\nvoid Store::open(int mode) {\n  n_ = mode;\n}\n}\n"
    ),
}


def _workspace(tmp_path: Path, files: dict[str, str]) -> Iterator[WorkspaceIndex]:
    root = tmp_path / "ws"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    index = WorkspaceIndex(root, IndexConfig(), db_path=tmp_path / "index.sqlite")
    index.refresh()
    yield index
    index.close()


@pytest.fixture
def python_ws(tmp_path: Path) -> Iterator[WorkspaceIndex]:
    yield from _workspace(tmp_path, PYTHON)


def _line(files: dict[str, str], path: str, text: str) -> int:
    """1-based number of the line of `path` that starts (after indentation) with `text`."""
    lines = files[path].split("\n")
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(text))


def _first(index: WorkspaceIndex, query: str) -> SearchHit:
    hits = index.search(query, top_k=5)
    assert hits, query
    return hits[0]


def _where(hit: SearchHit) -> tuple[str, str | None, int]:
    return hit.path, hit.symbol, hit.start


def test_a_qualified_method_beats_a_module_function_of_the_same_name(python_ws: WorkspaceIndex) -> None:
    start = _line(PYTHON, "pkg/settings.py", "# Reads the file first.")
    for query in (
        "Settings.load_config",
        "Settings.load_config()",
        "where is `Settings.load_config` defined",
    ):
        hit = _first(python_ws, query)
        assert _where(hit) == ("pkg/settings.py", "Settings.load_config", start), query
    # The hit is the method's own lines inside the one-chunk class, not the class.
    hit = _first(python_ws, "Settings.load_config")
    assert (hit.kind, hit.end) == ("method", _line(PYTHON, "pkg/settings.py", "return cls({})"))
    assert hit.text.splitlines()[:3] == [
        "    # Reads the file first.",
        "    @classmethod",
        "    def load_config(cls, path):",
    ]


def test_module_and_package_prefixes_pick_the_file(python_ws: WorkspaceIndex) -> None:
    load = _line(PYTHON, "pkg/loader.py", "def load_config")
    method = _line(PYTHON, "pkg/settings.py", "# Reads the file first.")
    assert _where(_first(python_ws, "loader.load_config")) == ("pkg/loader.py", "load_config", load)
    assert _where(_first(python_ws, "pkg.loader.load_config")) == ("pkg/loader.py", "load_config", load)
    assert _where(_first(python_ws, "pkg.settings.Settings.load_config")) == (
        "pkg/settings.py",
        "Settings.load_config",
        method,
    )
    # The bare name asks for the module-level function; the method comes right after it.
    hits = python_ws.search("load_config", top_k=5)
    assert [_where(h) for h in hits[:2]] == [
        ("pkg/loader.py", "load_config", load),
        ("pkg/settings.py", "Settings.load_config", method),
    ]


def test_names_defined_in_several_files(python_ws: WorkspaceIndex) -> None:
    assert _where(_first(python_ws, "yaml_format.parse")) == ("pkg/formats/yaml_format.py", "parse", 4)
    assert _where(_first(python_ws, "pkg.formats.json_format.parse")) == (
        "pkg/formats/json_format.py",
        "parse",
        4,
    )
    hits = python_ws.search("parse", top_k=5)
    assert {_where(h) for h in hits[:2]} == {
        ("pkg/formats/json_format.py", "parse", 4),
        ("pkg/formats/yaml_format.py", "parse", 4),
    }


def test_a_name_that_exists_only_as_a_method_points_at_the_method(python_ws: WorkspaceIndex) -> None:
    hit = _first(python_ws, "reload_everything")
    start = _line(PYTHON, "pkg/settings.py", "def reload_everything")
    assert (_where(hit), hit.end) == (("pkg/settings.py", "Settings.reload_everything", start), start + 1)
    # Naming the class still gives the whole class.
    hits = python_ws.search("reload_everything", top_k=5)
    assert (hits[1].symbol, hits[1].kind, hits[1].start, hits[1].end) == (
        "reload_everything",
        "constant",
        3,
        3,
    )
    hit = _first(python_ws, "Settings")
    assert (hit.symbol, hit.kind, hit.start) == ("Settings", "class", 6)
    assert "def reload_everything" in hit.text


def test_members_of_overridden_files_are_narrowed_too(python_ws: WorkspaceIndex) -> None:
    text = PYTHON["pkg/settings.py"] + "\n    def export_values(self):\n        return dict(self.values)\n"
    hits = python_ws.search("Settings.export_values", overrides={"pkg/settings.py": text})
    start = text.split("\n").index("    def export_values(self):") + 1
    assert (hits[0].path, hits[0].symbol, hits[0].start, hits[0].end) == (
        "pkg/settings.py",
        "Settings.export_values",
        start,
        start + 1,
    )
    assert (
        python_ws.search("Settings.export_values")[0].symbol != "Settings.export_values"
    )  # on disk: no such method


def test_find_symbol_still_reads_qualified_names(python_ws: WorkspaceIndex) -> None:
    defs = [h for h in python_ws.find_symbol("Settings.load_config") if h.role == "definition"]
    assert [(h.path, h.line) for h in defs] == [
        ("pkg/settings.py", _line(PYTHON, "pkg/settings.py", "def load_config"))
    ]


def test_typescript_method_of_a_one_chunk_class(tmp_path: Path) -> None:
    for index in _workspace(tmp_path, TYPESCRIPT):
        assert _where(_first(index, "Widget.render")) == ("src/widget.ts", "Widget.render", 4)
        assert _first(index, "Widget.render").end == 7
        assert _where(_first(index, "format.render")) == ("src/format.ts", "render", 1)
        assert _where(_first(index, "render")) == ("src/format.ts", "render", 1)


def test_go_receivers_and_package_functions(tmp_path: Path) -> None:
    for index in _workspace(tmp_path, GO):
        method = _line(GO, "internal/store/store.go", "// Reopen")
        func = _line(GO, "internal/store/store.go", "// Open opens the store")
        assert _where(_first(index, "Store.Open")) == ("internal/store/store.go", "Store.Open", method)
        assert _where(_first(index, "store.Open")) == ("internal/store/store.go", "Open", func)
        assert _where(_first(index, "cache.Open")) == ("internal/cache/cache.go", "Open", 6)


def test_rust_and_cpp_scoped_names(tmp_path: Path) -> None:
    for index in _workspace(tmp_path, NATIVE):
        for query in ("Store::open", "crate::store::Store::open", "how does Store::open work"):
            assert _where(_first(index, query)) == ("src/store.rs", "Store.open", 6), query
        hit = _first(index, "Store::path")  # the method, not the field of the same name
        assert (hit.path, hit.symbol, hit.kind, hit.start) == ("src/store.rs", "Store.path", "method", 10)
        # C++: the out-of-line definition before the declaration inside the class.
        hit = _first(index, "db::Store::open")
        assert (hit.path, hit.symbol, hit.start, hit.end) == ("cpp/store.cpp", "db.Store.open", 10, 12)
        hit = _first(index, "Store::size")
        assert (hit.path, hit.symbol, hit.start, hit.end) == ("cpp/store.cpp", "db.Store.size", 5, 5)


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("Settings.load_config", ["Settings.load_config"]),
        ("load_config or Settings.load_config", ["Settings.load_config", "load_config"]),
        ("how does Store::open work", ["Store.open"]),
        ("crate::store::Store::open", ["store.Store.open"]),
        ("pkg.mod.Class.method_name", ["pkg.mod.Class.method_name"]),
    ],
)
def test_parts_of_a_dotted_name_are_not_names_of_their_own(query: str, names: list[str]) -> None:
    assert named_symbols(analyze_query(query)) == names


def test_a_sentence_naming_a_member_keeps_its_class_and_promotes_no_values(python_ws: WorkspaceIndex) -> None:
    hits = python_ws.search("what does `reload_everything` clear in the settings", top_k=5)
    assert (hits[0].symbol, hits[0].kind) == ("Settings.reload_everything", "method")
    # The class chunk still ranks by its words; the module value of the same name is no exact hit here.
    assert [(h.symbol, h.kind, h.start) for h in hits[1:3]] == [("Settings", "class", 6), (None, "module", 1)]


def test_find_symbol_takes_module_prefixed_names(python_ws: WorkspaceIndex, tmp_path: Path) -> None:
    method = _line(PYTHON, "pkg/settings.py", "def load_config")
    for name in ("pkg.settings.Settings.load_config", "settings.Settings.load_config"):
        defs = [h for h in python_ws.find_symbol(name) if h.role == "definition"]
        assert [(h.path, h.qualified_name, h.line) for h in defs] == [
            ("pkg/settings.py", "Settings.load_config", method)
        ], name
    defs = [h for h in python_ws.find_symbol("yaml_format.parse") if h.role == "definition"]
    assert [(h.path, h.line) for h in defs] == [("pkg/formats/yaml_format.py", 4)]
    assert [h for h in python_ws.find_symbol("json_format.load_config") if h.role == "definition"] == []
    for index in _workspace(tmp_path / "go", GO):
        defs = [h for h in index.find_symbol("cache.Open") if h.role == "definition"]
        assert [(h.path, h.qualified_name) for h in defs] == [("internal/cache/cache.go", "Open")]


def test_a_member_inside_a_large_class_skeleton_gets_its_own_lines(tmp_path: Path) -> None:
    methods = "".join(
        f'    def step_{i}(self, value):\n        """Step {i}."""\n        return value + {i}\n\n'
        for i in range(15)
    )
    text = f'class Pipeline:\n    """Many steps: too large for one chunk."""\n\n{methods}    # Seconds.\n    timeout = 5\n'
    for index in _workspace(tmp_path, {"flow.py": text}):
        hit = _first(index, "Pipeline.timeout")  # inside the skeleton, whose text skips the method bodies
        line = text.split("\n").index("    timeout = 5") + 1
        assert (hit.symbol, hit.kind, hit.start, hit.end) == ("Pipeline.timeout", "attribute", line - 1, line)
        assert hit.text == "    # Seconds.\n    timeout = 5"
        assert _where(_first(index, "Pipeline.step_3")) == ("flow.py", "Pipeline.step_3", 4 + 4 * 3)
