"""Server latency: initialize (vs a bare pygls server, same run) and codeAction p95 on a 5,000-line file with a
pending proposal, idle and while typing (vs the bare server's empty codeAction handler).

    python benchmarks/server_latency.py [--rounds 5] [--requests 300] [--blocks 6] [--baseline-tree DIR ...]

Each codeAction row also gives the server's CPU time per request (all its threads, from /proc), which a busy
machine disturbs far less than the round-trip percentiles. --baseline-tree measures another checkout's server in
the same run (the issue-12 regression was checked against 739394e this way). All servers run at once and each
phase is split into rounds in which they take turns, so load that comes and goes during the run (other work on a
shared machine) falls on every server alike instead of on whichever ran last.

Targets: initialize request -> reply under 200 ms (and close to the bare server); codeAction p95 <= 10 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
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


def code_action_times(
    client: WireClient, uri: str, requests: int, hunk_lines: list[int], first: int = 0
) -> list[float]:
    """Round trips of codeAction requests spread over the file, a third of them on changed lines."""
    times: list[float] = []
    for i in range(first, first + requests):
        line = hunk_lines[i % len(hunk_lines)] if i % 3 == 0 else (i * 37) % LINES
        started = time.perf_counter()
        client.request("textDocument/codeAction", code_action_params(uri, line))
        times.append(time.perf_counter() - started)
    return times


def typing_times(
    client: WireClient, uri: str, requests: int, hunk_lines: list[int], first: int = 0
) -> list[float]:
    """didChange (one character typed away from the hunks) then codeAction on a changed line: what a lightbulb
    costs while the user types in a file with a pending proposal (every request sees a new text to rebase onto).
    Request i sends document version i + 2 (didOpen sent version 1)."""
    times: list[float] = []
    for i in range(first, first + requests):
        line = (i * 37) % LINES
        while any(abs(line - h) <= 2 for h in hunk_lines):
            line = (line + 5) % LINES
        version = i + 2
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


HUNKS = [10, 2000, 4996]
HUNK_LINES = [4 * (n // 4) + 1 for n in HUNKS]  # the `return` line of f(n//4)


def flip_signs_script() -> list[dict]:
    """The scripted model's turns: three one-line edits of big.py, then done."""
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
        for n in HUNKS
    ]
    script.append(
        {"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "flip signs"}}]}
    )
    return script


@dataclass
class Subject:
    """One measured server: its client and open document, and its codeAction round trips and CPU per phase."""

    label: str
    client: WireClient
    uri: str
    times: dict[str, list[float]] = field(default_factory=lambda: {"idle": [], "typing": []})
    cpu: dict[str, float] = field(default_factory=lambda: {"idle": 0.0, "typing": 0.0})
    sent: dict[str, int] = field(default_factory=lambda: {"idle": 0, "typing": 0})
    offered: list[str] = field(default_factory=list)  # titles on a changed line
    still_applies: bool = False

    def cpu_per_request(self, phase: str) -> float:
        """Server CPU seconds per request of a phase."""
        return self.cpu[phase] / max(1, self.sent[phase])

    def run_block(self, phase: str, requests: int) -> None:
        """The next `requests` requests of a phase, adding their round trips and the server's CPU."""
        first = self.sent[phase]
        timed = code_action_times if phase == "idle" else typing_times
        cpu = self.client.cpu_seconds()
        self.times[phase] += timed(self.client, self.uri, requests, HUNK_LINES, first)
        self.cpu[phase] += self.client.cpu_seconds() - cpu
        self.sent[phase] += requests


def start_agent(label: str, root: Path, text: str, tree: Path | None, stack: ExitStack) -> Subject:
    """lsp-agent (from `tree` when given) with a pending 3-hunk proposal on the open 5,000-line file."""
    uri = (root / "big.py").as_uri()
    env = {"PYTHONPATH": str(tree)} if tree else None
    model = stack.enter_context(ScriptedModelServer(flip_signs_script()))
    client = WireClient(OURS, root, env=env)
    stack.callback(client.close)
    options = {
        "lspAgent": {
            "model": "openai/scripted",
            "apiBase": model.base_url,
            "apiKey": "test",
            "toolCalling": "native",
        }
    }
    client.initialize(root, options, CAPS)
    open_document(client, uri, text)
    return Subject(label, client, uri)


def ask_agent(subject: Subject) -> str:
    """Start the ask (scripted: three one-line edits); its run id."""
    return subject.client.request(
        "workspace/executeCommand", {"command": "lspAgent.ask", "arguments": [{"task": "flip signs"}]}
    )["runId"]


def wait_for_proposal(subject: Subject, run_id: str) -> None:
    """Wait for the run's done event with a pending proposal."""
    done = subject.client.wait_notification(
        lambda n: (
            n["method"] == "lspAgent/event"
            and n["params"].get("runId") == run_id
            and n["params"].get("kind") == "done"
        )
    )
    assert done["params"].get("pending"), f"{subject.label}: no pending proposal: {done}"


def start_bare(root: Path, text: str, stack: ExitStack) -> Subject:
    """The bare pygls server (codeAction returns []) with the same document open."""
    uri = (root / "big.py").as_uri()
    client = WireClient(BARE, root)
    stack.callback(client.close)
    client.initialize(root, capabilities=CAPS)
    open_document(client, uri, text)
    return Subject("bare pygls (returns [])", client, uri)


def interleaved(subjects: list[Subject], phase: str, requests: int, blocks: int) -> None:
    """A phase in `blocks` rounds, each server taking its share in turn (the order rotating every round), so
    a machine that gets busier or quieter during the run weighs on every server alike."""
    share = [requests // blocks + (1 if b < requests % blocks else 0) for b in range(blocks)]
    for b, count in enumerate(share):
        for k in range(len(subjects)):
            subjects[(b + k) % len(subjects)].run_block(phase, count)


def check_offers(subject: Subject) -> None:
    """After the phases: the actions offered on a changed line, and whether the last hunk still applies."""
    still = subject.client.request("textDocument/codeAction", code_action_params(subject.uri, HUNK_LINES[2]))
    offered = subject.client.request(
        "textDocument/codeAction", code_action_params(subject.uri, HUNK_LINES[1])
    )
    subject.offered = [a["title"] for a in offered]
    subject.still_applies = any(a["title"].startswith("Apply agent edit") and "edit" in a for a in still)


def report(title: str, rows: list[tuple[str, list[float], float]], target_ms: float) -> None:
    """p50/p95 round trip and server CPU per request for each server (the first is bare pygls, the last ours);
    the last row's ratios against each row before it."""
    print(title)
    for label, times, cpu in rows:
        print(
            f"  {label:34s} p50 {percentile(times, 50) * 1000:6.2f} ms   p95 {percentile(times, 95) * 1000:6.2f} ms"
            f"   server CPU {cpu * 1000:6.3f} ms/request"
        )
    _, ours_times, ours_cpu = rows[-1]
    p95 = percentile(ours_times, 95)
    for label, times, cpu in rows[:-1]:
        print(f"  lsp-agent vs {label}: p95 {p95 / percentile(times, 95):5.2f}x   CPU {ours_cpu / cpu:5.2f}x")
    print(f"  target p95 <= {target_ms:g} ms: {'met' if p95 * 1000 <= target_ms else 'MISSED'}")


def measure_initialize_rounds(root: Path, rounds: int) -> None:
    """Initialize, cold and warm, bare pygls vs lsp-agent, median of `rounds`."""
    results: dict[str, dict[str, list[float]]] = {
        "bare": {"cold": [], "warm": []},
        "ours": {"cold": [], "warm": []},
    }
    for _ in range(rounds):
        for name, command in (("bare", BARE), ("ours", OURS)):
            results[name]["cold"].append(measure_initialize(command, root, cold=True))
            results[name]["warm"].append(measure_initialize(command, root, cold=False))
    print("initialize (median of", rounds, "rounds)")
    for kind, label in (("warm", "request -> reply, process idle"), ("cold", "spawn -> reply")):
        bare = statistics.median(results["bare"][kind]) * 1000
        ours = statistics.median(results["ours"][kind]) * 1000
        print(
            f"  {label:32s} bare pygls {bare:7.1f} ms   lsp-agent {ours:7.1f} ms   ratio {ours / bare:5.2f}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="initialize rounds (0: skip initialize)")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument(
        "--blocks", type=int, default=6, help="rounds each phase is split into, the servers taking turns"
    )
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        action="append",
        default=[],
        help="another checkout of lsp-agent (e.g. `git archive 739394e | tar -x -C DIR`) whose server is "
        "measured in the same run, for a regression check (repeatable)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp) / "ws"
        root.mkdir()
        text = big_file()
        (root / "big.py").write_text(text)
        if args.rounds > 0:
            measure_initialize_rounds(root, args.rounds)
        servers = [start_bare(root, text, stack)]
        agents = [
            start_agent(f"lsp-agent at {t}", root, text, t.resolve(), stack) for t in args.baseline_tree
        ]
        agents.append(start_agent("lsp-agent", root, text, None, stack))
        for agent, run_id in [(a, ask_agent(a)) for a in agents]:
            wait_for_proposal(agent, run_id)
        servers += agents
        for subject in servers:
            code_action_times(subject.client, subject.uri, 20, HUNK_LINES)  # warm-up
        load = os.getloadavg()[0]
        interleaved(servers, "idle", args.requests, args.blocks)
        interleaved(servers, "typing", args.requests, args.blocks)
        loads = f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}"
        ours = servers[-1]
        check_offers(ours)

        print(
            f"codeAction on a {LINES}-line file with a pending 3-hunk proposal ({args.requests} requests per "
            f"server, in {args.blocks} interleaved rounds; {loads})"
        )
        print(f"  actions offered on a changed line: {ours.offered}")
        report("  idle:", [(s.label, s.times["idle"], s.cpu_per_request("idle")) for s in servers], 10)
        print(
            "didChange (one character typed) + codeAction on a changed line, the proposal rebased each time"
        )
        print(f"  the hunk still applies after {args.requests} keystrokes: {ours.still_applies}")
        report("  typing:", [(s.label, s.times["typing"], s.cpu_per_request("typing")) for s in servers], 10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
