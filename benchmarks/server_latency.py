"""Server latency: initialize (vs a bare pygls server, same run) and codeAction p95 on a 5,000-line file with a
pending proposal, idle and while typing (vs the bare server's empty codeAction handler).

    python benchmarks/server_latency.py [--rounds 5] [--requests 300]

Targets: initialize request -> reply under 200 ms (and close to the bare server); codeAction p95 <= 10 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server_wire import BARE, OURS, WireClient, percentile  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

LINES = 5000
CAPS = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
            "changeAnnotationSupport": {"groupsOnLabel": True},
        },
    },
    "textDocument": {
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}
    },
}


def big_file() -> str:
    """A 5,000-line Python file of small functions."""
    return "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(LINES // 4))


def measure_initialize(command: list[str], root: Path, cold: bool) -> float:
    """Spawn -> initialize reply (cold) or initialize round trip once the process is idle (warm)."""
    client = WireClient(command, root, env={"LSP_AGENT_NO_PREWARM": "1"})
    try:
        if not cold:
            client.wait_idle()
            return client.initialize(root, capabilities=CAPS)
        client.initialize(root, capabilities=CAPS)
        return time.perf_counter() - client.spawned
    finally:
        client.close()


def code_action_params(uri: str, line: int) -> dict:
    """textDocument/codeAction at the start of one line, with no diagnostics."""
    return {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "context": {"diagnostics": []},
    }


def code_action_times(client: WireClient, uri: str, requests: int, hunk_lines: list[int]) -> list[float]:
    """Round trips of codeAction requests spread over the file, a third of them on changed lines."""
    times: list[float] = []
    for i in range(requests):
        line = hunk_lines[i % len(hunk_lines)] if i % 3 == 0 else (i * 37) % LINES
        started = time.perf_counter()
        client.request("textDocument/codeAction", code_action_params(uri, line))
        times.append(time.perf_counter() - started)
    return times


def typing_times(
    client: WireClient, uri: str, requests: int, hunk_lines: list[int], version: int
) -> list[float]:
    """didChange (one character typed away from the hunks) then codeAction on a changed line: what a lightbulb
    costs while the user types in a file with a pending proposal (every request sees a new text to rebase onto)."""
    times: list[float] = []
    for i in range(requests):
        line = (i * 37) % LINES
        while any(abs(line - h) <= 2 for h in hunk_lines):
            line = (line + 5) % LINES
        version += 1
        started = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": line, "character": 0},
                            "end": {"line": line, "character": 0},
                        },
                        "text": "#",
                    }
                ],
            },
        )
        hunk = hunk_lines[i % len(hunk_lines)]
        client.request("textDocument/codeAction", code_action_params(uri, hunk))
        times.append(time.perf_counter() - started)
    return times


def open_document(client: WireClient, uri: str, text: str) -> None:
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        text = big_file()
        (root / "big.py").write_text(text)
        uri = (root / "big.py").as_uri()

        results: dict[str, dict[str, list[float]]] = {
            "bare": {"cold": [], "warm": []},
            "ours": {"cold": [], "warm": []},
        }
        for _ in range(args.rounds):
            for name, command in (("bare", BARE), ("ours", OURS)):
                results[name]["cold"].append(measure_initialize(command, root, cold=True))
                results[name]["warm"].append(measure_initialize(command, root, cold=False))
        print("initialize (median of", args.rounds, "rounds)")
        for kind, label in (("warm", "request -> reply, process idle"), ("cold", "spawn -> reply")):
            bare = statistics.median(results["bare"][kind]) * 1000
            ours = statistics.median(results["ours"][kind]) * 1000
            print(
                f"  {label:32s} bare pygls {bare:7.1f} ms   lsp-agent {ours:7.1f} ms   ratio {ours / bare:5.2f}x"
            )

        hunks = [10, 2000, 4996]
        script = [
            {
                "content": "",
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "big.py",
                            "old_text": f"    return x + {n // 4}\n",
                            "new_text": f"    return x - {n // 4}\n",
                        },
                    }
                ],
            }
            for n in hunks
        ]
        script.append(
            {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "flip signs"}}]}
        )
        with ScriptedModelServer(script) as model:
            ours = WireClient(OURS, root)
            options = {
                "lspAgent": {
                    "model": "openai/scripted",
                    "apiBase": model.base_url,
                    "apiKey": "test",
                    "toolCalling": "native",
                }
            }
            ours.initialize(root, options, CAPS)
            open_document(ours, uri, text)
            run_id = ours.request(
                "workspace/executeCommand", {"command": "lspAgent.ask", "arguments": [{"task": "flip signs"}]}
            )["runId"]
            done = ours.wait_notification(
                lambda n: (
                    n["method"] == "lspAgent/event"
                    and n["params"].get("runId") == run_id
                    and n["params"].get("kind") == "done"
                )
            )
            assert done["params"].get("pending"), f"no pending proposal: {done}"
            hunk_lines = [4 * (n // 4) + 1 for n in hunks]  # the `return` line of f(n//4)
            code_action_times(ours, uri, 20, hunk_lines)  # warm-up
            ours_times = code_action_times(ours, uri, args.requests, hunk_lines)
            typing = typing_times(ours, uri, args.requests, hunk_lines, version=1)
            still_offered = ours.request("textDocument/codeAction", code_action_params(uri, hunk_lines[2]))
            offered = ours.request("textDocument/codeAction", code_action_params(uri, hunk_lines[1]))
            ours.close()

        bare = WireClient(BARE, root)
        bare.initialize(root, capabilities=CAPS)
        open_document(bare, uri, text)
        code_action_times(bare, uri, 20, [1])
        bare_times = code_action_times(bare, uri, args.requests, hunk_lines)
        bare_typing = typing_times(bare, uri, args.requests, hunk_lines, version=1)
        bare.close()

        titles = [a["title"] for a in offered]
        print(f"codeAction on a {LINES}-line file with a pending 3-hunk proposal ({args.requests} requests)")
        print(f"  actions offered on a changed line: {titles}")
        for label, times in (("bare pygls (returns [])", bare_times), ("lsp-agent", ours_times)):
            print(
                f"  {label:26s} p50 {percentile(times, 50) * 1000:6.2f} ms   p95 {percentile(times, 95) * 1000:6.2f} ms"
            )
        p95 = percentile(ours_times, 95) * 1000
        print(
            f"  p95 ratio vs bare: {p95 / (percentile(bare_times, 95) * 1000):.2f}x   target p95 <= 10 ms: "
            f"{'met' if p95 <= 10 else 'MISSED'}"
        )
        print(
            "didChange (one character typed) + codeAction on a changed line, the proposal rebased each time"
        )
        applies = [
            a["title"] for a in still_offered if a["title"].startswith("Apply agent edit") and "edit" in a
        ]
        print(f"  the hunk still applies after {args.requests} keystrokes: {bool(applies)}")
        for label, times in (("bare pygls (returns [])", bare_typing), ("lsp-agent", typing)):
            print(
                f"  {label:26s} p50 {percentile(times, 50) * 1000:6.2f} ms   p95 {percentile(times, 95) * 1000:6.2f} ms"
            )
        typed95 = percentile(typing, 95) * 1000
        print(
            f"  p95 ratio vs bare: {typed95 / (percentile(bare_typing, 95) * 1000):.2f}x   target p95 <= 10 ms: "
            f"{'met' if typed95 <= 10 else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
