"""The package layout: no import cycles between lsp_agent's packages, no front-end imported by the core, every
package described in docs/LAYOUT.md. The import graph is read from the source with `ast`."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lsp_agent"
LAYOUT_DOC = PACKAGE.parent / "docs" / "LAYOUT.md"

# Imports against the layering that close a cycle and stay until a file another helper owns changes:
# (importing module, imported package) -> the reason and the way out. The test fails once one is gone.
KNOWN_CYCLES: dict[tuple[str, str], str] = {}  # (module, package) -> why; empty: the layout has no cycle
FRONT_ENDS = {"cli", "server", "acp"}  # the core never imports these (data flows one way)
# agent/'s rooms and the rooms each may import ("agent": the modules at agent/'s top, the vocabulary every room
# shares: outcome, events, cancellation, prompts). Every import counts: inside functions and `if TYPE_CHECKING:`.
AGENT_ROOMS: dict[str, set[str]] = {
    "agent": set(),
    "model": {"agent"},
    "consent": {"agent"},
    "conversation": {"agent", "model", "consent"},
    "repair": {"agent", "model"},
    "loop": {"agent", "model", "consent", "conversation", "repair"},
}
MAY_IMPORT_FRONT_ENDS = {
    "cli",
    "__main__",
    "testing",
}  # the CLI starts the server; test helpers reuse its printer


@dataclass(frozen=True)
class Import:
    """One `import` of an lsp_agent module, at module level or inside a function."""

    module: str  # the importing module, e.g. lsp_agent.agent.loop.run
    target: str  # the imported module, e.g. lsp_agent.sandbox.codeact
    line: int

    def __str__(self) -> str:
        return f"{self.module} imports {self.target} (line {self.line})"


def package_of(module: str) -> str | None:
    """The package a module belongs to: lsp_agent.agent.loop.run -> agent, lsp_agent.config -> config."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # None: the root package (its __version__)


def module_name(path: Path) -> str:
    """lsp_agent/agent/loop/run.py -> lsp_agent.agent.loop.run; a package's __init__ is the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    """`if TYPE_CHECKING:` (its imports never run, so they make no cycle)."""
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The lsp_agent modules an import statement loads."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name.startswith("lsp_agent"))
        return
    base = node.module or ""
    if node.level:  # relative: resolve against the importing module's package
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    if not base.startswith("lsp_agent"):
        return
    targets = []
    for alias in node.names:  # `from lsp_agent.tools import registry` loads lsp_agent.tools.registry
        sub = PACKAGE.parent.joinpath(*f"{base}.{alias.name}".split("."))
        targets.append(f"{base}.{alias.name}" if sub.is_dir() or sub.with_suffix(".py").exists() else base)
    yield from dict.fromkeys(targets)


def imports_of(path: Path, module: str | None = None, typing: bool = False) -> list[Import]:
    """Every lsp_agent import in a file, at any depth, outside `if TYPE_CHECKING:` blocks unless `typing`."""
    module, found = module or module_name(path), []
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not typing:
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.extend(Import(module, t, child.lineno) for t in _targets(child, module, is_package))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return found


def package_graph(
    imports: list[Import], leave_out: Collection[tuple[str, str]] = ()
) -> dict[str, dict[str, list[Import]]]:
    """package -> imported package -> the imports that make that edge (edges inside a package, and imports
    `leave_out` names as (module, package), left out)."""
    graph: dict[str, dict[str, list[Import]]] = {}
    for imp in imports:
        src, dst = package_of(imp.module), package_of(imp.target)
        if (imp.module, dst) in leave_out:
            continue
        if src is None:
            src = "lsp_agent"
        graph.setdefault(src, {})
        if dst is not None and dst != src:
            graph[src].setdefault(dst, []).append(imp)
    return graph


def cycles(graph: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan), each sorted; empty when acyclic."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(groups)


def describe(group: list[str], graph: dict[str, dict[str, list[Import]]]) -> str:
    """A cycle and the imports that close it, for the failure message."""
    lines = [" <-> ".join(group) + ":"]
    for src in group:
        for dst in group:
            for imp in graph.get(src, {}).get(dst, []):
                lines.append(f"  {src} -> {dst}: {imp}")
    return "\n".join(lines)


def source_imports() -> list[Import]:
    """Every lsp_agent import in lsp_agent's source as it is now."""
    return [imp for path in sorted(PACKAGE.rglob("*.py")) for imp in imports_of(path)]


def source_graph() -> dict[str, dict[str, list[Import]]]:
    """The package graph of lsp_agent's source as it is now."""
    return package_graph(source_imports())


def test_no_import_cycles_between_packages():
    imports = source_imports()
    graph = package_graph(imports, leave_out=set(KNOWN_CYCLES))
    found = [describe(group, graph) for group in cycles(graph)]
    assert not found, "import cycles between packages:\n" + "\n".join(found)
    edges = {(imp.module, package_of(imp.target)) for imp in imports}
    full = package_graph(imports)
    gone = [f"{module} -> {pkg}" for module, pkg in KNOWN_CYCLES if (module, pkg) not in edges]
    gone += [f"{m} -> {p} (no cycle now)" for m, p in KNOWN_CYCLES if not any(p in g for g in cycles(full))]
    assert not gone, f"remove these from KNOWN_CYCLES: {gone}"


def test_the_core_never_imports_a_front_end():
    graph = source_graph()
    wrong = [
        str(imp)
        for src, edges in graph.items()
        if src not in FRONT_ENDS | MAY_IMPORT_FRONT_ENDS
        for dst, imps in edges.items()
        if dst in FRONT_ENDS
        for imp in imps
    ]
    assert not wrong, "the agent core imports a front-end:\n" + "\n".join(wrong)


def test_every_package_is_in_the_layout_doc():
    text = LAYOUT_DOC.read_text(encoding="utf-8")
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    missing = [name for name in packages if f"`{name}/`" not in text]
    assert not missing, f"docs/LAYOUT.md does not describe: {missing} (one line each: what lives there)"


def test_the_cycle_finder_names_cycles_and_their_imports(tmp_path):
    found = [
        Import("lsp_agent.a.x", "lsp_agent.b.y", 3),
        Import("lsp_agent.b.y", "lsp_agent.c", 5),
        Import("lsp_agent.c", "lsp_agent.a.z", 7),
        Import("lsp_agent.c", "lsp_agent.d", 8),
        Import("lsp_agent.a.x", "lsp_agent.a.z", 9),  # inside one package: no edge
    ]
    graph = package_graph(found)
    assert cycles(graph) == [["a", "b", "c"]]
    message = describe(["a", "b", "c"], graph)
    assert "a -> b: lsp_agent.a.x imports lsp_agent.b.y (line 3)" in message
    assert "c -> a: lsp_agent.c imports lsp_agent.a.z (line 7)" in message
    assert cycles(package_graph(found[:2] + found[3:])) == []

    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import lsp_agent.tools.registry\n"
        "if TYPE_CHECKING:\n    from lsp_agent.agent.loop.run import AgentRun\n"
        "def f():\n    from lsp_agent.sandbox import per_run\n"
    )
    targets = [imp.target for imp in imports_of(source, "lsp_agent.m")]
    assert targets == ["lsp_agent.tools.registry", "lsp_agent.sandbox.per_run"]


def agent_room(module: str) -> str:
    """The room of agent/ a module lives in: lsp_agent.agent.loop.run -> loop, lsp_agent.agent.events -> agent."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and (PACKAGE / "agent" / parts[2]).is_dir() else "agent"


def agent_imports(typing: bool = False) -> list[Import]:
    """The imports from one module of agent/ to another (with `if TYPE_CHECKING:` ones when `typing`)."""
    agent = PACKAGE / "agent"
    found = [imp for path in sorted(agent.rglob("*.py")) for imp in imports_of(path, typing=typing)]
    return [imp for imp in found if imp.target.startswith("lsp_agent.agent.")]


def test_agent_rooms_import_only_the_rooms_below_them():
    rooms = sorted(p.name for p in (PACKAGE / "agent").iterdir() if (p / "__init__.py").exists())
    assert sorted(set(AGENT_ROOMS) - {"agent"}) == rooms, "AGENT_ROOMS names every room of agent/"
    wrong = [
        f"{imp} ({agent_room(imp.module)} may import {sorted(AGENT_ROOMS[agent_room(imp.module)]) or 'no room'})"
        for imp in agent_imports(typing=True)  # type-only imports too: a room reads only the rooms below it
        if agent_room(imp.module) != agent_room(imp.target)
        and agent_room(imp.target) not in AGENT_ROOMS[agent_room(imp.module)]
    ]
    assert not wrong, "agent/ rooms importing against the layering:\n" + "\n".join(wrong)
    doc = LAYOUT_DOC.read_text(encoding="utf-8")
    assert not [room for room in rooms if f"`agent/{room}/`" not in doc], "docs/LAYOUT.md describes each room"


def test_no_module_of_agent_imports_itself_in_a_circle():
    graph: dict[str, dict[str, list[Import]]] = {}
    for imp in agent_imports(typing=True):  # type-only imports too: a circle to read through either way
        graph.setdefault(imp.module, {}).setdefault(imp.target, []).append(imp)
    found = [describe(group, graph) for group in cycles(graph)]
    assert not found, "import cycles between agent/'s modules:\n" + "\n".join(found)
