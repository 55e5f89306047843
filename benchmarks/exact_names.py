"""Exact names first, held out: how often `lsp-agent search NAME` ranks the named definition first on real code.

    python benchmarks/exact_names.py [--repo-code PATH] [--json OUT]

The packages and the query sampling were fixed before the first run and never tuned on (the ranking was tuned
on tests/index/test_exact_names.py only). Six installed packages (PACKAGES) are copied and indexed; the queries
come from Python's own `ast`, not from the index: per package, with random.Random(34), bare names of module-level
functions and of names that exist only as methods, `Class.method` of one-chunk classes (under 1,000 characters)
and of methods whose name is also a module-level function in another file, `module.function` (half of them
names defined in several files) and full dotted paths `pkg.mod.Class.method`.

A query is answered when the first hit is that definition: a file defining it, its qualified name as the hit's
symbol, and a definition line inside the hit's lines (a method returned as its whole class is a miss; for a name
defined in several places any of them counts). `--repo-code PATH` imports lsp_agent from another checkout (the
baseline: a worktree of main), so both rankings are measured on the same queries in one session.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
PACKAGES = ("httpx", "jinja2", "starlette", "urllib3", "cattrs", "anyio")  # fixed before the first run
SEED = 34
ONE_CHUNK_CHARS = 1000  # the index keeps a class this small as one chunk
PER_PACKAGE = {  # category -> queries sampled per package
    "name: function": 4,
    "name: method only": 3,
    "Class.method: small class": 4,
    "Class.method: name collides": 4,
    "module.function": 4,
    "pkg.mod.Class.method": 3,
}


@dataclass(frozen=True)
class Definition:
    """A definition as Python's ast sees it: file, module path, qualified name, def line, first line."""

    path: str
    module: str
    qualified: str
    line: int
    first: int  # with decorators
    end: int
    chars: int  # of the enclosing top-level class, for methods (0 for functions)


@dataclass(frozen=True)
class Query:
    """A query and the definitions that answer it."""

    category: str
    text: str
    answers: tuple[tuple[str, str, int], ...]  # (path, qualified name, def line)


def _module(rel: str) -> str:
    parts = rel[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def definitions(root: Path, package: str) -> list[Definition]:
    """Top-level functions and the methods of top-level classes of a package's non-test files."""
    out = []
    for file in sorted((root / package).rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if "/tests/" in f"/{rel}" or file.name.startswith("test_"):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.split("\n")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                out.append(
                    Definition(rel, _module(rel), node.name, node.lineno, first, node.end_lineno or 0, 0)
                )
            elif isinstance(node, ast.ClassDef):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                chars = len("\n".join(lines[first - 1 : node.end_lineno]))
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        start = min([d.lineno for d in item.decorator_list] + [item.lineno])
                        q = f"{node.name}.{item.name}"
                        out.append(
                            Definition(rel, _module(rel), q, item.lineno, start, item.end_lineno or 0, chars)
                        )
    return out


def sample_queries(defs: list[Definition], rng: random.Random) -> list[Query]:
    """The package's queries, drawn in a fixed order from sorted candidates."""
    by_qualified: dict[str, list[Definition]] = defaultdict(list)
    by_last: dict[str, list[Definition]] = defaultdict(list)
    for d in defs:
        by_qualified[d.qualified].append(d)
        by_last[d.qualified.rsplit(".", 1)[-1]].append(d)
    functions = sorted(
        {d.qualified for d in defs if "." not in d.qualified and not d.qualified.startswith("__")}
    )
    top_names = set(functions)
    methods = [d for d in defs if "." in d.qualified]
    method_only = sorted(
        {d.qualified.split(".")[1] for d in methods} - top_names - {n for n in by_last if n.startswith("__")}
    )
    small = sorted({d.qualified for d in methods if d.chars < ONE_CHUNK_CHARS})
    collides = sorted(
        {
            d.qualified
            for d in methods
            if any("." not in o.qualified and o.path != d.path for o in by_last[d.qualified.split(".")[1]])
        }
    )
    several = sorted({f for f in functions if len({d.path for d in by_qualified[f]}) > 1})

    def take(pool: list, n: int) -> list:
        return rng.sample(pool, min(n, len(pool)))

    def answers(name: str, exact: bool = True, path: str | None = None) -> tuple[tuple[str, str, int], ...]:
        """Definitions answering `name`: that qualified name (in `path`, when given), else any `*.name`."""
        found = by_last[name.rsplit(".", 1)[-1]]
        found = [d for d in found if (not exact or d.qualified == name) and path in (None, d.path)]
        return tuple((d.path, d.qualified, d.line) for d in found)

    out = []
    for name in take(functions, PER_PACKAGE["name: function"]):
        out.append(Query("name: function", name, answers(name)))
    for name in take(method_only, PER_PACKAGE["name: method only"]):
        out.append(Query("name: method only", name, answers(name, exact=False)))
    for name in take(small, PER_PACKAGE["Class.method: small class"]):
        out.append(Query("Class.method: small class", name, answers(name)))
    for name in take(collides, PER_PACKAGE["Class.method: name collides"]):
        out.append(Query("Class.method: name collides", name, answers(name)))
    n_module = PER_PACKAGE["module.function"]
    chosen = take(several, n_module // 2)
    chosen += take([f for f in functions if f not in chosen], n_module - len(chosen))
    for name in chosen:
        d = rng.choice(by_qualified[name])
        same = answers(name, path=d.path)  # overloads too
        out.append(Query("module.function", f"{d.module.rsplit('.', 1)[-1]}.{name}", same))
    for name in take(sorted({d.qualified for d in methods}), PER_PACKAGE["pkg.mod.Class.method"]):
        d = rng.choice(by_qualified[name])
        same = answers(name, path=d.path)
        out.append(Query("pkg.mod.Class.method", f"{d.module}.{name}", same))
    return out


def answered(hit, query: Query) -> bool:
    """The first hit is one of the query's definitions: its file, its qualified name, its def line inside."""
    return any(
        hit.path == path and hit.symbol == qualified and hit.start <= line <= hit.end
        for path, qualified, line in query.answers
    )


def run(work: Path) -> dict:
    """Index each package, ask its queries, and count first-rank answers per category."""
    from lsp_agent.index import IndexConfig, WorkspaceIndex

    rng = random.Random(SEED)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    seconds = 0.0
    for package in PACKAGES:
        root = work / package / "ws"
        shutil.copytree(SITE / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        queries = sample_queries(definitions(root, package), rng)
        with WorkspaceIndex(root, IndexConfig(), db_path=work / package / "index.sqlite") as index:
            index.refresh()
            for query in queries:
                started = time.perf_counter()
                hits = index.search(query.text, top_k=5)
                seconds += time.perf_counter() - started
                ok = bool(hits) and answered(hits[0], query)
                totals[query.category][0] += ok
                totals[query.category][1] += 1
                if not ok:
                    first = hits[0] if hits else None
                    got = (first.path, first.symbol, first.start, first.end) if first else None
                    misses.append({"query": query.text, "category": query.category, "first": got})
    n = sum(t[1] for t in totals.values())
    return {
        "totals": {k: {"first": v[0], "queries": v[1]} for k, v in totals.items()},
        "first": sum(t[0] for t in totals.values()),
        "queries": n,
        "ms_per_query": round(1000 * seconds / max(n, 1), 2),
        "misses": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo-code", type=Path, help="import lsp_agent from this checkout (the baseline)")
    parser.add_argument("--json", type=Path, help="write the figures and the misses here")
    args = parser.parse_args()
    code = (args.repo_code or Path(__file__).resolve().parent.parent).resolve()
    sys.path.insert(0, str(code))
    import lsp_agent

    assert Path(lsp_agent.__file__).resolve().is_relative_to(code), lsp_agent.__file__
    with tempfile.TemporaryDirectory(prefix="exact-names-") as tmp:
        result = run(Path(tmp))
    result["code"] = str(code)
    print(f"lsp_agent from {code}")
    for category, t in result["totals"].items():
        print(f"  {category:30} {t['first']:3}/{t['queries']:<3} {t['first'] / t['queries']:.2f}")
    print(
        f"  {'all':30} {result['first']:3}/{result['queries']:<3} {result['first'] / result['queries']:.2f}"
    )
    print(f"  search {result['ms_per_query']} ms per query; {len(result['misses'])} misses")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=asdict) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
