"""Inline completion latency while typing, through a real `lsp-agent serve`.

    [LSP_AGENT_BENCH_LOG=server.log] python benchmarks/completion_latency.py --api-base http://127.0.0.1:8012/v1 \
        [--model openai/qwen2.5-coder-1.5b] [--package click] [--lines 30] [--gap-ms 30] [--pause-ms 1500]

A function of an installed package is typed into its file keystroke by keystroke (`--gap-ms` apart, a pause of
`--pause-ms` at each line end, when a suggestion has time to arrive); every keystroke is a didChange followed by an
automatic inlineCompletion request, as an editor sends them. Reported per prompt order (the repository context
first, which llama.cpp's KV cache keeps, and last, after the cursor, where each keystroke invalidates it):
keystroke-to-suggestion p50/p95 (requests that got a suggestion from the model; cache hits apart), requests the
next keystroke cancelled, the prompt tokens the model server evaluated per request with its own time to
generate (llama.cpp's timings; absent from servers that do not report them), and the round trip of a codeAction
sent every 10th keystroke (the editor's lightbulb, which completions must not slow down).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "lsp_agent", "serve"]
if os.environ.get("LSP_AGENT_BENCH_LOG"):  # the server's DEBUG log, to see where the time goes
    SERVER += ["--log-level", "DEBUG", "--log-file", os.environ["LSP_AGENT_BENCH_LOG"]]


class AsyncLsp:
    """A minimal asyncio JSON-RPC client over a server's stdio; server requests are answered with null."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next = 0
        self._waiting: dict[int, asyncio.Future] = {}
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(cls, cwd: Path, env: dict[str, str]) -> AsyncLsp:
        proc = await asyncio.create_subprocess_exec(
            *SERVER,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=2**24,
        )
        return cls(proc)

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> asyncio.Future:
        self._next += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return future

    async def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        while True:
            length = 0
            while (line := await self.proc.stdout.readline()) not in (b"\r\n", b"\n"):
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await self.proc.stdout.readexactly(length))
            if "method" in message and "id" in message:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message and message["id"] in self._waiting:
                future = self._waiting.pop(message["id"])
                if not future.done():
                    future.set_result((time.perf_counter(), message.get("result"), message.get("error")))

    async def close(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


def typing_target(package: str, lines_wanted: int) -> tuple[Path, str, int, int]:
    """(package dir, file, first and last line) of a function of about `lines_wanted` lines to retype."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not installed as a package")
    source = Path(list(spec.submodule_search_locations)[0])
    best: tuple[int, str, int, int] | None = None
    for path in sorted(source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.end_lineno:
                size = node.end_lineno - node.lineno + 1
                if best is None or abs(size - lines_wanted) < abs(best[0] - lines_wanted):
                    best = (size, path.relative_to(source).as_posix(), node.lineno, node.end_lineno)
    assert best is not None
    return source, best[1], best[2], best[3]


HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
PERF = re.compile(
    r"llama_perf_context_print: +(prompt eval|eval) time = +([\d.]+) ms / +(\d+) (?:tokens|runs)"
)


def server_log_requests(log: Path | None, since: int) -> list[dict[str, float]]:
    """llama-cpp-python's own account of each request it served after byte `since` of its log (its stderr):
    the prompt tokens it evaluated (those its prefix cache did not hold) and, for a request it finished (a
    stream closed early prints no timings), its prompt and generation time."""
    if log is None:
        return []
    with log.open("rb") as handle:
        handle.seek(since)
        text = handle.read().decode("utf-8", "replace")
    requests: list[dict[str, float]] = []
    for line in text.splitlines():
        if hit := HIT.search(line):
            requests.append({"prompt_n": int(hit.group(2))})
        elif perf := PERF.search(line):
            kind, ms, count = perf.groups()
            if kind == "prompt eval":
                if not requests or "prompt_ms" in requests[-1]:  # a cold prompt prints no prefix-match line
                    requests.append({})
                requests[-1].update(prompt_n=int(count), prompt_ms=float(ms))
            elif requests and "predicted_ms" not in requests[-1]:
                requests[-1].update(predicted_n=int(count), predicted_ms=float(ms))
    return requests


async def replay(args: argparse.Namespace, work: Path, context_last: bool) -> dict[str, Any]:
    """Type the target function through a fresh server; the measurements."""
    log_start = args.server_log.stat().st_size if args.server_log else 0
    source, rel, first, last = typing_target(args.package, args.lines)
    root = work / ("last" if context_last else "first") / args.package
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__"))
    lines = (root / rel).read_text(encoding="utf-8").split("\n")
    typed = "\n".join(lines[first - 1 : last])
    start_text = "\n".join(lines[: first - 1] + [""] + lines[last:])
    env = {**os.environ, "PYTHONPATH": str(REPO), "LSP_AGENT_NO_PREWARM": "1", "HOME": str(work / "home")}
    env["LSP_AGENT_BENCH_CONTEXT_LAST"] = "1" if context_last else "0"
    env["XDG_CACHE_HOME"] = str(work / "cache")
    lsp = await AsyncLsp.start(root, env)
    settings = {
        "model": args.model,
        "apiBase": args.api_base,
        "apiKey": "none",
        "completionDebounceMs": args.debounce,
    }
    await lsp.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "initializationOptions": {"lspAgent": settings},
        },
    )
    lsp.notify("initialized", {})
    uri = (root / rel).as_uri()
    lsp.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": start_text}},
    )
    for _ in range(600):  # the index first: context lookups need it
        status = (await lsp.request("workspace/executeCommand", {"command": "lspAgent.status"}))[1]
        if status and status["index"]["ready"]:
            break
        await asyncio.sleep(0.1)
    sent, actions = await type_text(lsp, uri, first - 1, typed, args)
    await asyncio.sleep(args.pause_ms / 1000)
    status = (await lsp.request("workspace/executeCommand", {"command": "lspAgent.status"}))[1]["completion"]
    await lsp.close()
    if args.server_log:  # llama-cpp-python sends no timings: read them from its log
        status["serverTimings"] = server_log_requests(args.server_log, log_start)
        status["promptTokensEvaluated"] = [t["prompt_n"] for t in status["serverTimings"]]
    return {
        "target": f"{args.package}/{rel}:{first}-{last}",
        "keystrokes": len(typed),
        **outcome(sent, status, args.debounce),
        **code_action_latency(actions),
    }


async def type_text(
    lsp: AsyncLsp, uri: str, line: int, typed: str, args: argparse.Namespace
) -> tuple[list[tuple], list[tuple]]:
    """Send the keystrokes; (sent at, future) of each completion request and of a codeAction every 10th."""
    version, character, sent, actions = 1, 0, [], []
    for char in typed:
        version += 1
        position = {"line": line, "character": character}
        lsp.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": position, "end": position}, "text": char}],
            },
        )
        line, character = (line + 1, 0) if char == "\n" else (line, character + 1)
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": 2},
        }
        sent.append((time.perf_counter(), lsp.request("textDocument/inlineCompletion", params)))
        if version % 10 == 0:  # the lightbulb the editor asks for as the cursor moves
            here = {"start": params["position"], "end": params["position"]}
            action = {"textDocument": {"uri": uri}, "range": here, "context": {"diagnostics": []}}
            actions.append((time.perf_counter(), lsp.request("textDocument/codeAction", action)))
        await asyncio.sleep((args.pause_ms if char == "\n" else args.gap_ms) / 1000)
    return sent, actions


def outcome(sent: list[tuple], status: dict[str, Any], debounce_ms: float) -> dict[str, Any]:
    """Latencies of the requests that got a suggestion, and the server's counts. A suggestion that came before
    the debounce ended is one the cache answered (typing through a shown one): the model's are apart."""
    latencies = []
    for started, future in sent:
        if future.done():
            answered, result, _ = future.result()
            if result and result.get("items"):
                latencies.append((answered - started) * 1000)
    timings = status.get("serverTimings") or []
    model_ms = [t.get("prompt_ms", 0) + t.get("predicted_ms", 0) for t in timings if "predicted_ms" in t]
    waited = (
        status.get("modelMs") or []
    )  # the client's side: sending each answered request to its stream's end
    from_model = [ms for ms in latencies if ms >= debounce_ms]
    return {
        "model_suggestions": len(from_model),
        "model_suggestion_p50_ms": statistics.median(from_model) if from_model else None,
        "suggestions": len(latencies),
        "p50_ms": statistics.median(latencies) if latencies else None,
        "p95_ms": sorted(latencies)[int(0.95 * (len(latencies) - 1))] if latencies else None,
        "model_requests": status["modelRequests"],
        "cancelled": status["cancelled"],
        "cache_hits": status["cacheHits"],
        "prompt_tokens_evaluated_p50": statistics.median(status["promptTokensEvaluated"] or [0]),
        "model_ms_p50": statistics.median(model_ms) if model_ms else None,
        "model_request_ms_p50": statistics.median(waited) if waited else None,
        "model_request_ms": waited,
        "suggestion_ms": [round(ms) for ms in latencies],
        "prompt_tokens_evaluated": status["promptTokensEvaluated"],
        "model_ms": [round(ms) for ms in model_ms],
    }


def code_action_latency(actions: list[tuple]) -> dict[str, Any]:
    """codeAction round trips while completions run (the server must keep answering the editor)."""
    times = sorted((f.result()[0] - started) * 1000 for started, f in actions if f.done())
    if not times:
        return {"code_actions": 0}
    return {
        "code_actions": len(times),
        "code_action_p50_ms": statistics.median(times),
        "code_action_p95_ms": times[int(0.95 * (len(times) - 1))],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    parser.add_argument("--package", default="click")
    parser.add_argument("--lines", type=int, default=30, help="about how long a function to retype")
    parser.add_argument("--gap-ms", type=float, default=30)
    parser.add_argument("--pause-ms", type=float, default=1500)
    parser.add_argument("--debounce", type=int, default=75)
    parser.add_argument(
        "--server-log",
        type=Path,
        help="llama-cpp-python's stderr: its per-request timings and tokens evaluated",
    )
    parser.add_argument("--out", type=Path, help="write the two rows here as JSON")
    args = parser.parse_args(argv)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="completion-latency-") as tmp:
        for label, last in (("context first", False), ("context last", True)):
            rows[label] = asyncio.run(replay(args, Path(tmp), last))
    print(json.dumps(rows, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
