"""What one monitor correction costs, and how often it brings back the right name, on the development packages.

    python benchmarks/completion_monitor.py --api-base http://127.0.0.1:8766/v1 \
        [--model openai/qwen2.5-coder-1.5b-instruct] [--packages httpx,jinja2,markdown_it,packaging] [--tasks 20]
        [--seed 2] [--limit 10] [--out FILE]

Tasks are completion_quality.py's; only those whose answer writes `receiver.name` with a receiver the monitor
checks (`self`, an imported workspace module, an annotated parameter) are used. The model's first reply is replaced
by the answer with that name made one the receiver lacks (`<name>_x`); the first request is still sent (one
token), so the server evaluates and keeps the prompt as it would have for its own reply. The monitor's two extra
requests go to the model: the member it picks under the grammar (the written name no longer counts: the grammar
starts after `receiver.`) and the rest of the suggestion from there. Reports per task: the member picked, whether
it is the answer's, whether the corrected suggestion is the exact answer, and the extra seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from completion_quality import Task, prepare, score  # noqa: E402

from lsp_agent.completion.context import line_reader  # noqa: E402
from lsp_agent.completion.engine import CompletionEngine, CompletionRequest  # noqa: E402
from lsp_agent.completion.fim_client import FimClient  # noqa: E402
from lsp_agent.completion.members import Workspace  # noqa: E402
from lsp_agent.completion.monitor import ATTRIBUTE, PREFIX_TAIL, first_slip, masked, receivers_at  # noqa: E402
from lsp_agent.completion.postprocess import Cursor  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402


class GivenFirstReply(FimClient):
    """A model client whose first plain request is sent for one token and answered with a given text."""

    def __init__(self, client: FimClient, first: str) -> None:
        super().__init__(client.model, client.api_base, client.api_key, client.timeout)
        self.first, self.given = first, False

    async def stream(self, request, on_text):  # noqa: ANN001, ANN201 - FimClient's signature
        if self.given or request.grammar is not None:
            return await super().stream(request, on_text)
        self.given = True
        result = await super().stream(dataclasses.replace(request, max_tokens=1), lambda _: False)
        result.text, result.finish_reason = self.first, "stop"
        return result


def misspelt(task: Task, workspace: Workspace) -> tuple[str, str] | None:
    """(the answer with its first checked name made one its receiver lacks, that name), or None."""
    lines = task.text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: task.line]) + task.character
    receivers = receivers_at(workspace, task.rel, task.text, offset)
    tail = lines[task.line][: task.character][-PREFIX_TAIL:]
    cursor = Cursor(lines[task.line][: task.character], lines[task.line][task.character :])
    for match in ATTRIBUTE.finditer(masked(tail + task.answer)):
        if (
            match.group(1) in receivers
            and match.start(2) >= len(tail)
            and match.group(2) in receivers[match.group(1)]
        ):
            at, name = match.start(2) - len(tail), match.group(2)
            wrong = task.answer[:at] + name + "_x" + task.answer[at + len(name) :]
            slip = first_slip(cursor, wrong, receivers)
            if slip is not None and slip.at == at:  # an assigned name is never a slip: the next one
                return wrong, name
    return None


async def run(
    tasks: list[tuple[int, Task]], roots: dict, indexes: dict, settings: Settings, out: Path | None
) -> list[dict]:
    """Each (number, task) through an engine whose first reply is the misspelt answer."""
    rows = []
    for i, task in tasks:
        root = roots[task.package]
        workspace = Workspace(indexes[task.package].db_path, line_reader(root, {}), root.name)
        given = misspelt(task, workspace)
        if given is None:
            continue
        engine = CompletionEngine(
            lambda: settings, lambda _p, t=task: indexes[t.package], list, lambda *_: None
        )
        setup = engine.setup()
        client = GivenFirstReply(engine._model_client(setup), given[0])
        engine._client = (engine._client[0], client)
        request = CompletionRequest(
            f"task-{i}", root / task.rel, root, task.text, task.line, task.character, True
        )
        started = time.perf_counter()
        suggestion = await engine.complete(request)
        seconds = time.perf_counter() - started
        text = suggestion.text if suggestion else ""
        at = given[0].find(given[1] + "_x")
        picked = re.match(r"\w*", text[at:]).group() if engine.stats.monitor_corrected and at >= 0 else None
        row = {
            "task": i,
            "kind": task.kind,
            "name": given[1],
            "picked": picked,
            "picked_right": picked == given[1],
        }
        row |= {"exact": score(text, task)[0], "extra_ms": (engine.stats.monitor_ms or [0])[-1]}
        row |= {"seconds": round(seconds, 1), "suggestion": text, "answer": task.answer}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
        if out is not None:
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
        await engine.aclose()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--packages", default="httpx,jinja2,markdown_it,packaging")
    parser.add_argument("--tasks", type=int, default=20, help="tasks per package, as completion_quality.py")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--limit", type=int, default=10, help="the first this many usable tasks")
    parser.add_argument("--request-timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.out:
        args.out.write_text("", encoding="utf-8")
    settings = Settings(
        model=args.model, api_base=args.api_base, api_key="none", completion_debounce_ms=0,
        request_timeout=args.request_timeout,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="completion-monitor-") as tmp:
        tasks, roots, indexes = prepare(args.packages.split(","), args.tasks, args.seed, Path(tmp))
        usable = []
        for number, task in enumerate(tasks):
            root = roots[task.package]
            if misspelt(task, Workspace(indexes[task.package].db_path, line_reader(root, {}), root.name)):
                usable.append((number, task))
        rows = asyncio.run(run(usable[: args.limit], roots, indexes, settings, args.out))
        for index in indexes.values():
            index.close()
    corrected = [r for r in rows if r["picked"] is not None]
    extra = sorted(r["extra_ms"] for r in corrected)
    print(f"{len(rows)} tasks with a checked name ({len(usable)} usable of {len(tasks)}); model {args.model}")
    print(f"corrected {len(corrected)}; the answer's name picked {sum(r['picked_right'] for r in corrected)}")
    print(f"exact after the correction {sum(r['exact'] for r in rows)}")
    if extra:
        print(f"extra ms per corrected suggestion: median {extra[len(extra) // 2]}, most {extra[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
