"""Inline completion quality on real code: repository context against the file's prefix and suffix alone.

    python benchmarks/completion_quality.py --api-base http://127.0.0.1:8012/v1 \
        [--model openai/qwen2.5-coder-1.5b] [--packages click,pathspec,dotenv,cattrs] [--tasks 40] [--seed 1]

Tasks come from installed pure-Python packages (copied out of site-packages and indexed as a workspace): a random
function body, the cursor at a random point of one of its lines (a line task: the rest of the line is the answer)
or at the start of one of its statements (a block task: the rest of that body, up to 12 lines). Each task is asked
twice through the completion engine, in the same run: with repository context (`completionContextTokens`) and with
it at 0 (the prefix and suffix only). The file under test is in the index with its answer, but the engine never
shows the index's chunks or definitions of the open file: its own outline comes from the task's document (the
hole already cut out) and only from outside the prompt's window, so the answer cannot leak through either
(tests/server/test_inline_completion_context.py checks it through the protocol). Scores: exact match (whitespace at line
ends ignored) and edit similarity (1 - Levenshtein distance / longer length), in percent.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import itertools
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_agent.completion import context as context_module  # noqa: E402
from lsp_agent.completion import engine as engine_module  # noqa: E402
from lsp_agent.completion.engine import CompletionEngine, CompletionRequest  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402

PACKAGES = ("click", "pathspec", "dotenv", "cattrs")
CONTEXT, MONITORED, BARE = "repository context", "context + monitor", "prefix/suffix only"
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


async def run_paired(
    tasks: list[Task],
    roots: dict[str, Path],
    configs: dict[str, Settings],
    indexes: dict,
    out: Path | None,
    first: int = 0,
) -> dict[str, list[dict]]:
    """Ask every task once per configuration, the configurations back to back for each task (so a run stopped
    early still compares them on the same tasks); each row is appended to `out` (JSON lines) as it comes."""
    engines = {
        label: CompletionEngine(
            lambda s=settings: s, lambda path: indexes.get(_package_of(path, roots)), list, _say
        )
        for label, settings in configs.items()
    }
    results: dict[str, list[dict]] = {}
    for i, task in enumerate(tasks, start=first):  # numbered as in the whole list
        for label, engine in engines.items():
            row = await ask_one(engine, i, task, roots[task.package])
            rows = {label: row}
            if label == MONITORED:  # the same request's answer before the monitor: the context alone
                rows = {CONTEXT: unguided_row(row, task), label: row}
            for name, one in rows.items():
                results.setdefault(name, []).append(one)
                if out is not None:
                    with out.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps({"config": name, **one}) + "\n")
                print(
                    f"task {i} {task.kind} {name}: exact={one['exact']} {one['seconds']:.1f} s",
                    file=sys.stderr,
                )
    for engine in engines.values():
        stats = engine.stats
        if stats.monitor_checked:
            spent = sorted(stats.monitor_ms)
            print(
                f"monitor: read {stats.monitor_checked} suggestions with a known receiver, corrected "
                f"{stats.monitor_corrected} ({stats.monitor_corrections} names); extra ms per corrected suggestion: "
                f"{spent[len(spent) // 2] if spent else 0} median, {spent[-1] if spent else 0} most; "
                f"model off for the monitor: {sorted(engine.monitor.unsupported) or 'none'}"
            )
        await engine.aclose()
    return results


async def ask_one(engine: CompletionEngine, i: int, task: Task, root: Path) -> dict:
    """One task through one engine: the row of its score, time and prompt size."""
    engine.cache.__init__()  # a task never reuses another's suggestion
    request = CompletionRequest(
        f"task-{i}", root / task.rel, root, task.text, task.line, task.character, invoked=True
    )
    sent = len(engine.stats.prompt_tokens_evaluated)
    corrected = engine.stats.monitor_corrected
    started = time.perf_counter()
    suggestion = await engine.complete(request)
    if engine._model_down:  # a row of a model that is not there would score as a wrong answer
        raise SystemExit(f"task {i}: the model server did not answer; rerun from here with --first {i}")
    text = suggestion.text if suggestion else ""
    exact, similarity = score(text, task)
    prompt_tokens = engine.stats.prompt_tokens_evaluated[sent:]
    extra = {"monitor_ms": engine.stats.monitor_ms[-1] if engine.stats.monitor_corrected > corrected else 0}
    if suggestion is not None and suggestion.unguided is not None:
        extra["unguided"] = suggestion.unguided
    return extra | {
        "task": i,
        "package": task.package,
        "kind": task.kind,
        "exact": exact,
        "similarity": similarity,
        "seconds": time.perf_counter() - started,
        "prompt_tokens": prompt_tokens[0] if prompt_tokens else None,
        "suggestion": text,
    }


def unguided_row(row: dict, task: Task) -> dict:
    """The row of a monitored request's first answer (before any correction), timed without the extra requests."""
    text = row.get("unguided", row["suggestion"])
    exact, similarity = score(text, task)
    seconds = row["seconds"] - row["monitor_ms"] / 1000
    kept = {k: v for k, v in row.items() if k not in ("unguided", "monitor_ms")}
    return kept | {"exact": exact, "similarity": similarity, "seconds": seconds, "suggestion": text}


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
    per_name: list[list[Task]] = []
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
        per_name.append(build_tasks(root, name, per_package, rng))
    # round robin over the packages, so a run stopped early has tasks of each
    tasks = [task for group in itertools.zip_longest(*per_name) for task in group if task is not None]
    return tasks, roots, indexes


def task_list(tasks: list[Task]) -> dict:
    """The tasks without their documents (rebuilt from the same package versions and seed), with those versions."""
    from importlib.metadata import version

    names = {"dotenv": "python-dotenv", "markdown_it": "markdown-it-py"}
    versions = {t.package: version(names.get(t.package, t.package)) for t in tasks}
    return {
        "versions": versions,
        "tasks": [{k: v for k, v in asdict(t).items() if k != "text"} for t in tasks],
    }


def print_table(results: dict[str, list[dict]]) -> None:
    """Exact match, edit similarity and median seconds per prompt and kind, over the tasks every prompt answered."""
    done = set.intersection(*({r["task"] for r in rows} for rows in results.values()))
    print(f"{'prompt':<20} {'kind':<6} {'tasks':>5} {'exact %':>8} {'edit sim %':>11} {'p50 s':>6}")
    for label, rows in results.items():
        rows = [r for r in rows if r["task"] in done]
        for kind in ("line", "block", None):
            n, exact, similarity = summary(rows, kind)
            seconds = sorted(r["seconds"] for r in rows if kind is None or r["kind"] == kind)
            p50 = seconds[len(seconds) // 2] if seconds else 0.0
            print(f"{label:<20} {kind or 'all':<6} {n:>5} {exact:>8.1f} {similarity:>11.1f} {p50:>6.2f}")
    both = [{label: next(r for r in rows if r["task"] == t) for label, rows in results.items()} for t in done]
    for label in results:
        alone = sum(row[label]["exact"] and sum(r["exact"] for r in row.values()) == 1 for row in both)
        print(f"tasks only {label} got exactly right: {alone}")


def report(path: Path) -> None:
    """The table of a run's JSON lines (also of a run stopped early: the tasks both prompts answered)."""
    results: dict[str, list[dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        results.setdefault(row.pop("config"), []).append(row)
    print(f"{path}: {len(set.intersection(*({r['task'] for r in v} for v in results.values())))} tasks")
    print_table(results)


def recall_run(args: argparse.Namespace) -> int:
    """The model-free diagnostic: the context's recall of the answers' unseen names (completion_recall.py)."""
    from completion_recall import context_recall, print_recall

    engine_module.CONTEXT_WAIT_SECONDS = args.context_wait
    if args.out:
        args.out.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="completion-recall-") as tmp:
        tasks, roots, indexes = prepare(args.packages.split(","), args.tasks, args.seed, Path(tmp))
        settings = Settings(completion_context_tokens=args.context_tokens)
        rows = asyncio.run(context_recall(tasks, roots, indexes, settings, args.out))
        for index in indexes.values():
            index.close()
    print(
        f"context recall, {args.context_tokens} tokens of context; packages {', '.join(roots)}, seed {args.seed}"
    )
    print_recall(rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--api-base", help="OpenAI-compatible base URL ending in /v1")
    parser.add_argument("--report", type=Path, help="print the table of a run's --out file (no model)")
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--tasks", type=int, default=40, help="tasks per package (half line, half block)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--context-tokens", type=int, default=Settings().completion_context_tokens)
    parser.add_argument("--context-wait", type=float, default=30.0, help="seconds to wait for the context")
    parser.add_argument(
        "--request-timeout", type=float, default=Settings().request_timeout, help="seconds per model request"
    )
    parser.add_argument("--first", type=int, default=0, help="skip the tasks before this one (of the list)")
    parser.add_argument("--limit", type=int, default=0, help="ask only this many tasks (0: all)")
    parser.add_argument(
        "--context-only",
        action="store_true",
        help="ask only the repository-context prompt (the prefix/suffix prompt is greedy and unchanged by a context "
        "change, so an earlier run's rows can stand for it; say so when reporting)",
    )
    parser.add_argument(
        "--monitor",
        action="store_true",
        help="also score monitor-guided decoding: the context prompt with the monitor on gives two rows per task, "
        "its first answer (the context alone) and the answer after the monitor's corrections",
    )
    parser.add_argument(
        "--shares",
        help="HEAD,OWN: the context budget's shares for the import head and the open file's outline "
        f"(default {context_module.HEAD_SHARE},{context_module.OWN_SHARE}; for development runs)",
    )
    parser.add_argument("--out", type=Path, help="append every row here as a JSON line as it comes")
    parser.add_argument(
        "--context-recall",
        action="store_true",
        help="no model: which unseen names of each answer the context shows",
    )
    args = parser.parse_args(argv)
    if args.report:
        report(args.report)
        return 0
    if args.context_recall:
        return recall_run(args)
    if not args.api_base:
        parser.error("--api-base is required (or --report FILE)")
    engine_module.CONTEXT_WAIT_SECONDS = args.context_wait  # measure the context, not a busy machine's index
    if args.shares:
        context_module.HEAD_SHARE, context_module.OWN_SHARE = (float(x) for x in args.shares.split(","))
    if args.out:
        args.out.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="completion-quality-") as tmp:
        tasks, roots, indexes = prepare(args.packages.split(","), args.tasks, args.seed, Path(tmp))
        if args.first or args.limit:
            tasks = tasks[args.first : args.first + args.limit if args.limit else None]
        if args.out and not args.first:  # the task list, fixed before the first answer
            tasks_file = args.out.with_suffix(".tasks.json")
            tasks_file.write_text(json.dumps(task_list(tasks), indent=1), encoding="utf-8")
        base = Settings(
            model=args.model,
            api_base=args.api_base,
            api_key="none",
            completion_debounce_ms=0,
            request_timeout=args.request_timeout,
        )
        context = base.replace(completion_context_tokens=args.context_tokens, completion_monitor=args.monitor)
        configs = {MONITORED if args.monitor else CONTEXT: context}
        if not args.context_only:
            configs[BARE] = base.replace(completion_context_tokens=0, completion_monitor=False)
        results = asyncio.run(run_paired(tasks, roots, configs, indexes, args.out, args.first))
        for index in indexes.values():
            index.close()
    print(f"{len(tasks)} tasks from {', '.join(roots)}; model {args.model} at {args.api_base}")
    print_table(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
