"""What showing the model's words live costs the language server: CPU per streamed delta, and how much sooner the
editor sees the first words, live text on (`liveTextInterval` 75 ms) against off (0: each step shown whole).

    python benchmarks/streaming_cost.py [--runs 5] [--deltas 400] [--delay 0.005]

The model is the scripted OpenAI-compatible server on 127.0.0.1 (litellm's real streaming path), sending one reply
of `--deltas` content deltas `--delay` seconds apart (0.005 s: a fast model, 200 deltas/s) and a task_complete call.
The editor is a raw JSON-RPC client over stdio that reads every notification and answers $/progress creation.
For each run: the server's CPU time from lspAgent.ask to the `done` event (all threads, /proc schedstat), and the
time from the model sending its first delta (the request's arrival plus one delay) to the editor receiving the
first words: a `text` event with live text on, the step's `thought` event with it off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from server_wire import OURS, WireClient  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

WORDS = "the quick brown fox jumps over the lazy dog and keeps on running far "  # 16-character deltas


class TimedClient(WireClient):
    """A WireClient that notes when each notification arrived."""

    def _handle(self, message: dict) -> None:
        if "method" in message and "id" not in message:
            message["arrived"] = time.monotonic()
        super()._handle(message)


def _of_run(run_id: str, *kinds: str):  # noqa: ANN202
    def match(note: dict) -> bool:
        params = note.get("params") or {}
        return (
            note.get("method") == "lspAgent/event"
            and params.get("runId") == run_id
            and params.get("kind") in kinds
        )

    return match


def one_run(
    client: TimedClient, model: ScriptedModelServer, deltas: int, delay: float
) -> tuple[float, float, int]:
    """(server CPU seconds, seconds from the first delta to the first words in the editor, `text` events)."""
    content = (WORDS * (deltas * 16 // len(WORDS) + 1))[: deltas * 16]
    step = {"content": content, "chunk_delay": delay}
    step["tool_calls"] = [{"name": "task_complete", "arguments": {"summary": "done"}}]
    model.add_steps([step])
    seen = len(model.request_times)
    cpu = client.cpu_seconds()
    run_id = client.request(
        "workspace/executeCommand", {"command": "lspAgent.ask", "arguments": [{"task": "talk"}]}
    )["runId"]
    client.wait_notification(_of_run(run_id, "done"), timeout=120)
    cpu = client.cpu_seconds() - cpu
    first_delta = model.request_times[seen] + delay
    words = next(n for n in client.notifications if _of_run(run_id, "text", "thought")(n))
    texts = sum(1 for n in client.notifications if _of_run(run_id, "text")(n))
    return cpu, words["arrived"] - first_delta, texts


class Server:
    """One language server on its own workspace and scripted model, with a liveTextInterval."""

    def __init__(self, interval_ms: int, tmp: Path) -> None:
        self.model = ScriptedModelServer([]).start()
        root = tmp / f"ws-{interval_ms}"
        root.mkdir()
        (root / "app.py").write_text("def main():\n    return 1\n")
        self.client = TimedClient(OURS, root, env={"XDG_CACHE_HOME": str(tmp / f"cache-{interval_ms}")})
        settings = {"model": "openai/scripted", "apiBase": self.model.base_url, "apiKey": "test"}
        settings |= {"toolCalling": "native", "liveTextInterval": interval_ms}
        self.client.initialize(root, {"lspAgent": settings}, {"window": {"workDoneProgress": True}})
        one_run(self.client, self.model, 20, 0.0)  # warm-up: litellm's import, the first connection
        self.client.wait_idle()
        self.results: tuple[list[float], list[float], list[int]] = ([], [], [])

    def run(self, deltas: int, delay: float) -> None:
        """One measured run."""
        for values, value in zip(self.results, one_run(self.client, self.model, deltas, delay), strict=True):
            values.append(value)
        self.client.wait_idle()

    def close(self) -> None:
        self.client.close()
        self.model.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.005)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        servers = [Server(0, Path(tmp)), Server(75, Path(tmp))]
        for _ in range(args.runs):  # alternating, so both see the same machine load
            for server in servers:
                server.run(args.deltas, args.delay)
        for server in servers:
            server.close()
    off, on = servers[0].results, servers[1].results
    cpu_off, cpu_on = statistics.median(off[0]), statistics.median(on[0])
    late_off, late_on = statistics.median(off[1]), statistics.median(on[1])
    stream_seconds = args.deltas * args.delay
    print(
        f"one reply of {args.deltas} deltas, {args.delay * 1000:.0f} ms apart ({stream_seconds:.1f} s), {args.runs} runs each"
    )
    print(
        f"  server CPU per run:  off {cpu_off * 1000:7.1f} ms   on {cpu_on * 1000:7.1f} ms   ratio on/off {cpu_on / cpu_off:5.2f}"
    )
    per_delta = (cpu_on - cpu_off) / args.deltas * 1e6
    print(f"  extra CPU per streamed delta with live text: {per_delta:6.1f} us")
    print(f"  text events per run (on): median {statistics.median(on[2]):.0f} for {args.deltas} deltas")
    print(
        f"  first delta -> first words in the editor:  off {late_off * 1000:7.1f} ms   on {late_on * 1000:7.1f} ms"
    )
    print(f"  ratio off/on: {late_off / late_on:5.1f}x sooner with live text")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
