"""Inline completion quality on real code: repository context against the file's prefix and suffix alone.

    python benchmarks/completion_quality.py --api-base http://127.0.0.1:8012/v1 \
        [--model openai/qwen2.5-coder-1.5b] [--packages click,pathspec,dotenv,cattrs] [--tasks 40] [--seed 1]

Tasks come from installed pure-Python packages (copied out of site-packages and indexed as a workspace): a random
function body, the cursor at a random point of one of its lines (a line task: the rest of the line is the answer)
or at the start of one of its statements (a block task: the rest of that body, up to 12 lines). Each task is asked
twice through the completion engine, in the same run: with repository context (`completionContextTokens`) and with
it at 0 (the prefix and suffix only). The file under test is in the index, but the engine never shows a file's own
chunks or definitions as context, so the answer cannot leak through it. Scores: exact match (whitespace at line
ends ignored) and edit similarity (1 - Levenshtein distance / longer length), in percent.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.completion.engine import CompletionEngine, CompletionRequest  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402

PACKAGES = ("click", "pathspec", "dotenv", "cattrs")
MAX_BLOCK_LINES = 12


@dataclass
class Task:
    """A hole in a file: the document as the editor has it, the cursor, and the text that was there."""

    package: str
    rel: str
    kind: str  # "line" | "block"
    text: str
    line: int
    character: int
    answer: str


def package_dir(name: str) -> Path | None:
    """The installed package's directory (None when it is not installed or is a single module)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def line_task(package: str, rel: str, lines: list[str], stmt: ast.stmt, rng: random.Random) -> Task | None:
    """The cursor somewhere inside a one-line statement; the rest of the line is the answer."""
    if stmt.end_lineno != stmt.lineno:
        return None
    line = lines[stmt.lineno - 1]
    start = len(line) - len(line.lstrip())
    if len(line) - start < 12:
        return None
    cut = rng.randint(start + 2, len(line) - 3)
    document = lines[: stmt.lineno - 1] + [line[:cut]] + lines[stmt.lineno :]
    return Task(package, rel, "line", "\n".join(document), stmt.lineno - 1, cut, line[cut:])


def block_task(
    package: str, rel: str, lines: list[str], body: list[ast.stmt], rng: random.Random
) -> Task | None:
    """The cursor at the start of a statement; the rest of the body (at most MAX_BLOCK_LINES) is the answer."""
    end = body[-1].end_lineno or body[-1].lineno
    choices = [s for s in body if end - s.lineno + 1 <= MAX_BLOCK_LINES]
    if not choices:
        return None
    stmt = rng.choice(choices)
    first = lines[stmt.lineno - 1]
    indent = first[: len(first) - len(first.lstrip())]
    answer = "\n".join(lines[stmt.lineno - 1 : end])[len(indent) :]
    document = lines[: stmt.lineno - 1] + [indent] + lines[end:]
    return Task(package, rel, "block", "\n".join(document), stmt.lineno - 1, len(indent), answer)


def build_tasks(root: Path, package: str, count: int, rng: random.Random) -> list[Task]:
    """`count` tasks (half line, half block) from random function bodies of the package's files."""
    functions: list[tuple[str, list[str], list[ast.stmt]]] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.split("\n")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = [
                    s
                    for s in node.body
                    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                ]
                if len(body) >= 3:
                    functions.append((path.relative_to(root).as_posix(), lines, body))
    tasks: list[Task] = []
    attempts = 0
    while len(tasks) < count and functions and attempts < count * 50:
        attempts += 1
        rel, lines, body = rng.choice(functions)
        if len(tasks) % 2 == 0:
            task = line_task(package, rel, lines, rng.choice(body[1:]), rng)
        else:
            task = block_task(package, rel, lines, body[1:], rng)
        if task is not None and task.answer.strip():
            tasks.append(task)
    return tasks


def levenshtein(a: str, b: str) -> int:
    """The edit distance of two strings."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def normalized(text: str, kind: str) -> str:
    """The text compared: the first line for a line task, whole lines without end whitespace for a block."""
    if kind == "line":
        return text.split("\n", 1)[0].strip()
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip()


def score(suggestion: str, task: Task) -> tuple[bool, float]:
    """(exact match, edit similarity in percent)."""
    got, want = normalized(suggestion, task.kind), normalized(task.answer, task.kind)
    longest = max(len(got), len(want)) or 1
    return got == want, 100.0 * (1 - levenshtein(got, want) / longest)


async def run_config(
    tasks: list[Task], roots: dict[str, Path], settings: Settings, indexes: dict
) -> list[dict]:
    """Ask every task through a fresh engine with these settings; one row per task."""
    engine = CompletionEngine(
        lambda: settings, lambda path: indexes.get(_package_of(path, roots)), list, _say
    )
    rows = []
    for i, task in enumerate(tasks):
        engine.cache.__init__()  # a task never reuses another's suggestion
        root = roots[task.package]
        request = CompletionRequest(
            f"task-{i}", root / task.rel, root, task.text, task.line, task.character, invoked=True
        )
        started = time.perf_counter()
        suggestion = await engine.complete(request)
        text = suggestion.text if suggestion else ""
        exact, similarity = score(text, task)
        rows.append(
            {
                "task": i,
                "kind": task.kind,
                "exact": exact,
                "similarity": similarity,
                "seconds": time.perf_counter() - started,
                "suggestion": text,
            }
        )
    await engine.aclose()
    return rows


def _package_of(path: Path, roots: dict[str, Path]) -> str | None:
    return next((name for name, root in roots.items() if root in path.parents), None)


def _say(message: str, loud: bool) -> None:
    print(f"engine: {message}", file=sys.stderr)


def summary(rows: list[dict], kind: str | None) -> tuple[int, float, float]:
    """(tasks, exact match %, mean edit similarity %) of the rows of one kind (all when None)."""
    chosen = [r for r in rows if kind is None or r["kind"] == kind]
    if not chosen:
        return 0, 0.0, 0.0
    exact = 100.0 * sum(r["exact"] for r in chosen) / len(chosen)
    return len(chosen), exact, sum(r["similarity"] for r in chosen) / len(chosen)


def prepare(
    packages: list[str], per_package: int, seed: int, work: Path
) -> tuple[list[Task], dict[str, Path], dict]:
    """Copy and index each installed package; build its tasks."""
    from lsp_agent.index import WorkspaceIndex

    rng = random.Random(seed)
    tasks: list[Task] = []
    roots: dict[str, Path] = {}
    indexes: dict = {}
    for name in packages:
        source = package_dir(name)
        if source is None:
            print(f"skipping {name}: not installed as a package", file=sys.stderr)
            continue
        root = work / name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
        index = WorkspaceIndex(root, db_path=work / f"{name}.db")
        index.refresh()
        roots[name], indexes[name] = root, index
        tasks += build_tasks(root, name, per_package, rng)
    return tasks, roots, indexes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--api-base", required=True, help="OpenAI-compatible base URL ending in /v1")
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--tasks", type=int, default=40, help="tasks per package (half line, half block)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--context-tokens", type=int, default=1024)
    parser.add_argument("--out", type=Path, help="write every row as JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="completion-quality-") as tmp:
        tasks, roots, indexes = prepare(args.packages.split(","), args.tasks, args.seed, Path(tmp))
        base = Settings(model=args.model, api_base=args.api_base, api_key="none", completion_debounce_ms=0)
        results = {}
        for label, tokens in (("repository context", args.context_tokens), ("prefix/suffix only", 0)):
            settings = base.replace(completion_context_tokens=tokens)
            results[label] = asyncio.run(run_config(tasks, roots, settings, indexes))
        for index in indexes.values():
            index.close()
    print(f"{len(tasks)} tasks from {', '.join(roots)}; model {args.model} at {args.api_base}")
    print(f"{'prompt':<20} {'kind':<6} {'tasks':>5} {'exact %':>8} {'edit sim %':>11} {'p50 s':>6}")
    for label, rows in results.items():
        for kind in ("line", "block", None):
            n, exact, similarity = summary(rows, kind)
            seconds = sorted(r["seconds"] for r in rows if kind is None or r["kind"] == kind)
            p50 = seconds[len(seconds) // 2] if seconds else 0.0
            print(f"{label:<20} {kind or 'all':<6} {n:>5} {exact:>8.1f} {similarity:>11.1f} {p50:>6.2f}")
    if args.out:
        payload = {"tasks": [asdict(t) for t in tasks], "results": results}
        args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
