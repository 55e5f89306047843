"""How much of a completion prompt a prefix-matching KV cache evaluates again, line by line, without a model.

    python benchmarks/completion_prompt_reuse.py [--packages httpx,jinja2] [--functions 6] [--seed 3]

Functions of installed packages (at least 10 body lines) are written line by line: at each line end the engine
builds its Qwen2.5-Coder prompt (the context it would gather, `CompletionEngine.context`, then the window), and the
characters after the longest common start with the previous prompt are what llama-cpp-python (prefix match, no
`--cache-reuse`) evaluates again. Reported for the context's prompt order and for the same snippets in rank order
(kind, then the order they were found in), over all line ends and over those that start a new band of lines.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import completion_quality  # noqa: E402

from lsp_agent.completion import context, engine  # noqa: E402
from lsp_agent.completion.engine import CompletionEngine, CompletionRequest  # noqa: E402
from lsp_agent.completion.prompt import build_prompt, file_window  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402

RANK = {"imported": 0, "definition": 0, "similar": 0, "edit": 1, "own": 2}
ORDERS = {"prompt order": context.prompt_order, "rank order": lambda s: sorted(s, key=lambda x: RANK[x.kind])}


def long_functions(root: Path) -> list[tuple[Path, list[str], int, int]]:
    """(file, its lines, first body line, end line) of every function with at least 10 body lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first, end = node.body[0].lineno - 1, node.end_lineno or node.lineno
                if end - first >= 10:
                    out.append((path, text.split("\n"), first, end))
    return out


async def write_function(root: Path, index, function, settings: Settings) -> list[tuple[int, int, bool]]:
    """(chars evaluated again, prompt chars, a new band) at each line end of one function written anew."""
    path, lines, first, end = function
    completion = CompletionEngine(lambda: settings, lambda p: index, list, lambda m, loud: None)
    rows, previous = [], None
    for k in range(first, end):
        indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
        document = [*lines[:k], indent, *lines[end:]]
        request = CompletionRequest(str(path), path, root, "\n".join(document), k, len(indent), invoked=True)
        snippets = await completion.context(request)
        window = file_window(path.relative_to(root).as_posix(), "python", document, k, len(indent))
        prompt, _ = build_prompt("qwen", "qwen2.5-coder", root.name, snippets, window)
        if previous is not None:
            same = len(os.path.commonprefix([previous, prompt]))
            rows.append((len(prompt) - same, len(prompt), k % engine.CONTEXT_BAND_LINES == 0))
        previous = prompt
    await completion.aclose()
    return rows


async def measure(packages: list[str], functions: int, seed: int, work: Path) -> dict[str, list]:
    """The rows of every order over the chosen functions of each package."""
    results: dict[str, list] = {label: [] for label in ORDERS}
    settings = Settings(completion_context_tokens=Settings().completion_context_tokens)
    from lsp_agent.index import WorkspaceIndex

    for name in packages:
        root = work / name
        shutil.copytree(
            completion_quality.package_dir(name), root, ignore=shutil.ignore_patterns("__pycache__")
        )
        index = WorkspaceIndex(root, db_path=work / f"{name}.db")
        index.refresh()
        chosen = random.Random(seed).sample(long_functions(root), functions)
        for label, order in ORDERS.items():
            context.prompt_order = order
            for function in chosen:
                results[label] += await write_function(root, index, function, settings)
        index.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packages", default="httpx,jinja2")
    parser.add_argument("--functions", type=int, default=6, help="functions per package")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    engine.CONTEXT_WAIT_SECONDS = 30.0
    with tempfile.TemporaryDirectory(prefix="prompt-reuse-") as tmp:
        results = asyncio.run(measure(args.packages.split(","), args.functions, args.seed, Path(tmp)))
    print(
        f"{'order':<14} {'line ends':>9} {'chars again (mean)':>19} {'of':>6} {'new band':>9} {'again there':>12}"
    )
    for label, rows in results.items():
        bands = [r for r in rows if r[2]]
        again = statistics.mean(r[0] for r in rows)
        size = statistics.mean(r[1] for r in rows)
        band_again = statistics.mean(r[0] for r in bands) if bands else 0.0
        print(f"{label:<14} {len(rows):>9} {again:>19.0f} {size:>6.0f} {len(bands):>9} {band_again:>12.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
