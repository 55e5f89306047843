"""How often the repository context could help a completion task, without a model (`completion_quality.py
--context-recall`).

For each task: the names of the answer that the prompt's prefix/suffix window does not show and that are not Python
builtins or keywords (the names the model has to know from elsewhere); whether the repository has them at all (the
open document outside the window, or another file of the package); and whether the context the engine builds for
the request (`CompletionEngine.context`, the snippets its prompt would carry) shows them.
"""

from __future__ import annotations

import functools
import io
import json
import re
import sys
import textwrap
import tokenize
from collections import Counter
from pathlib import Path

from lsp_agent.completion.context import COMMON, IDENTIFIER
from lsp_agent.completion.engine import CompletionEngine, CompletionRequest
from lsp_agent.completion.prompt import PREFIX_LINES, SUFFIX_LINES, WINDOW_STEP, file_window
from lsp_agent.config import Settings
from lsp_agent.index.chunking import file_symbols

TRAILING_NAME = re.compile(r"[A-Za-z0-9_]*$")


def answer_names(task) -> list[str]:
    """The names (NAME tokens, not words in strings or comments) the answer writes, the name cut by the cursor
    whole."""
    line = task.text.split("\n")[task.line]
    code = textwrap.dedent(line[: task.character] + task.answer)
    names: list[str] = []
    start = len(textwrap.dedent(line[: task.character] + "x")) - 1  # the cursor's column after the dedent
    lead = TRAILING_NAME.search(line[: task.character]).group()  # type: ignore[union-attr]
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            first_line = token.start[0] == 1
            if token.type == tokenize.NAME and not (first_line and token.end[1] <= start - len(lead)):
                names.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # an answer may end inside brackets: the names before the error count
    return list(dict.fromkeys(names))


def task_recall(task, snippets: list, root: Path) -> dict:
    """The row of one task: its unseen names, which the repository has and which the context shows."""
    lines = task.text.split("\n")
    window = file_window(task.rel, "python", lines, task.line, task.character)
    shown = set(IDENTIFIER.findall(window.prefix + window.suffix))
    unseen = [n for n in answer_names(task) if n not in shown and n not in COMMON]
    start = max(0, task.line - PREFIX_LINES)
    start -= start % WINDOW_STEP
    own_rest = set(IDENTIFIER.findall("\n".join(lines[:start] + lines[task.line + 1 + SUFFIX_LINES :])))
    others, defined = _repository_names(root, task.rel)
    defined = defined | {s.name for s in file_symbols(task.rel, task.text, references=False)}
    by_kind: dict[str, set[str]] = {}
    for snippet in snippets:
        by_kind.setdefault(snippet.kind, set()).update(IDENTIFIER.findall(snippet.text))
    in_context = [n for n in unseen if any(n in names for names in by_kind.values())]
    return {
        "unseen": unseen,
        "in_repository": [n for n in unseen if n in own_rest or n in others],
        "in_own_file": [n for n in unseen if n in own_rest],
        "defined": [n for n in unseen if n in defined],
        "in_context": in_context,
        "context_kinds": {n: sorted(k for k, names in by_kind.items() if n in names) for n in in_context},
        "context_chars": sum(len(s.text) for s in snippets),
    }


@functools.cache
def _repository_names(root: Path, rel: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the names written in the package's other files, the names its other files define)."""
    written: set[str] = set()
    defined: set[str] = set()
    for path in root.rglob("*.py"):
        if path.relative_to(root).as_posix() != rel:
            text = path.read_text(encoding="utf-8", errors="replace")
            written |= set(IDENTIFIER.findall(text))
            defined |= {s.name for s in file_symbols(path.name, text, references=False)}
    return frozenset(written), frozenset(defined)


async def context_recall(
    tasks: list, roots: dict[str, Path], indexes: dict, settings: Settings, out: Path | None
) -> list[dict]:
    """Every task's recall row (appended to `out` as JSON lines when given)."""
    engine = CompletionEngine(lambda: settings, lambda path: indexes.get(_package(path, roots)), list, _quiet)
    rows: list[dict] = []
    for i, task in enumerate(tasks):
        root = roots[task.package]
        request = CompletionRequest(
            f"task-{i}", root / task.rel, root, task.text, task.line, task.character, invoked=True
        )
        snippets = await engine.context(request)
        row = {"task": i, "package": task.package, "kind": task.kind, **task_recall(task, snippets, root)}
        rows.append(row)
        if out is not None:
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    await engine.aclose()
    return rows


def print_recall(rows: list[dict]) -> None:
    """The figures: tasks with unseen names, and how many of those names the repository and the context hold."""
    with_unseen = [r for r in rows if r["unseen"]]
    names = Counter()
    for r in with_unseen:
        for key in ("unseen", "in_repository", "in_own_file", "in_context"):
            names[key] += len(r[key])
    all_shown = sum(len(r["in_context"]) == len(r["unseen"]) for r in with_unseen)
    any_shown = sum(bool(r["in_context"]) for r in with_unseen)
    could = [r for r in with_unseen if len(r["in_repository"]) == len(r["unseen"])]
    print(f"{len(rows)} tasks; {len(with_unseen)} with names the prefix/suffix window does not show")
    print(f"  unseen names: {names['unseen']}; in the repository: {names['in_repository']} ", end="")
    print(
        f"(in the open file outside the window: {names['in_own_file']}); in the context: {names['in_context']}"
    )
    print(f"  tasks whose unseen names the repository holds all of: {len(could)}")
    defined = [r for r in with_unseen if r["defined"]]
    shown = sum(len(set(r["defined"]) & set(r["in_context"])) for r in defined)
    total = sum(len(r["defined"]) for r in defined)
    print(
        f"  unseen names the repository defines (a def, class or assignment): {total} in {len(defined)} tasks; ",
        end="",
    )
    print(f"in the context: {shown}; tasks with all of them shown: ", end="")
    print(sum(set(r["defined"]) <= set(r["in_context"]) for r in defined))
    print(f"  tasks whose context shows all unseen names: {all_shown}; at least one: {any_shown}")
    print(
        f"  context shows all of them where the repository holds all: {sum(_all(r) for r in could)}/{len(could)}"
    )
    kinds = Counter(k for r in rows for ks in r["context_kinds"].values() for k in ks)
    chars = sorted(r["context_chars"] for r in rows)
    print(f"  names found by snippet kind: {dict(kinds)}; context chars p50 {chars[len(chars) // 2]}")


def _all(row: dict) -> bool:
    return len(row["in_context"]) == len(row["unseen"])


def _package(path: Path, roots: dict[str, Path]) -> str | None:
    return next((name for name, root in roots.items() if root in path.parents), None)


def _quiet(message: str, loud: bool) -> None:
    print(f"engine: {message}", file=sys.stderr)
