"""The language server's own layout: no import cycle among the modules of lsp_agent/server/ (imports inside
functions count, `if TYPE_CHECKING:` ones do not), and one module, features.py, registers the handlers."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SERVER = TESTS.parent / "lsp_agent" / "server"
WIRING = "lsp_agent.server.features"


def _package_layout():
    """tests/test_layout.py, whose ast import reader and cycle finder this test reuses."""
    spec = importlib.util.spec_from_file_location("package_layout", TESTS / "test_layout.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


layout = _package_layout()


def module_graph(files: dict[str, Path]) -> dict[str, dict[str, list]]:
    """module -> imported module of the same set -> the imports that make that edge."""
    graph: dict[str, dict[str, list]] = {name: {} for name in files}
    for name, path in files.items():
        for imp in layout.imports_of(path, name):
            if imp.target in files and imp.target != name:
                graph[name].setdefault(imp.target, []).append(imp)
    return graph


def server_modules() -> dict[str, Path]:
    """lsp_agent.server.X -> its file."""
    return {layout.module_name(path): path for path in sorted(SERVER.glob("*.py"))}


def registrations(path: Path) -> list[int]:
    """Lines of a module that register a handler with a server (`x.feature(...)`, `x.command(...)`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("feature", "command")
    ]


def test_no_import_cycle_among_the_server_modules():
    graph = module_graph(server_modules())
    found = [layout.describe(group, graph) for group in layout.cycles(graph)]
    assert not found, "import cycles inside lsp_agent/server/:\n" + "\n".join(found)


def test_only_features_registers_handlers_and_nothing_in_server_imports_it():
    files = server_modules()
    registering = {name: lines for name, path in files.items() if (lines := registrations(path))}
    assert set(registering) == {WIRING}, f"handlers registered outside features.py: {registering}"
    importers = [str(imp) for name, edges in module_graph(files).items() for imp in edges.get(WIRING, [])]
    assert not importers, "features.py wires the handlers; nothing it wires may import it:\n" + "\n".join(
        importers
    )


def test_the_check_names_a_cycle_closed_inside_a_function(tmp_path):
    (tmp_path / "state.py").write_text(
        "def helper():\n    from lsp_agent.server.handlers import handle\n    return handle\n"
    )
    (tmp_path / "handlers.py").write_text(
        "from lsp_agent.server.state import helper\n\ndef handle():\n    return helper\n"
    )
    (tmp_path / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lsp_agent.server.handlers import handle\n"
    )
    (tmp_path / "uses_typed.py").write_text("from lsp_agent.server.typed import TYPE_CHECKING\n")
    files = {f"lsp_agent.server.{p.stem}": p for p in tmp_path.glob("*.py")}
    graph = module_graph(files)
    assert layout.cycles(graph) == [["lsp_agent.server.handlers", "lsp_agent.server.state"]]
    message = layout.describe(["lsp_agent.server.handlers", "lsp_agent.server.state"], graph)
    assert "lsp_agent.server.state imports lsp_agent.server.handlers (line 2)" in message
    assert graph["lsp_agent.server.typed"] == {}  # an import under TYPE_CHECKING never runs
