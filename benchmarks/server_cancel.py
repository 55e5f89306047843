"""Cancel latency: lspAgent.cancel of a run, from the request to the run's `done` event saying cancelled.

    python benchmarks/server_cancel.py [--cancels 24]

The model is the scripted OpenAI-compatible server on 127.0.0.1 (litellm's real HTTP path), every step delayed
by 60 s, so a run never ends by itself. Half of the cancels come right after lspAgent.ask returns (the run is still
starting), half while the model request is in flight (the scripted server has taken the request and is waiting).
Each time from sending lspAgent.cancel to receiving the run's lspAgent/event `done` is recorded; the baseline in the
same run is the round trip of lspAgent.status on the same server (what any command costs).

Target: cancel p95 <= 1 s, and the server keeps answering throughout.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from server_wire import OURS, WireClient, percentile  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

TARGET_SECONDS = 1.0
DELAY = 60.0


def _done_of(run_id: str):  # noqa: ANN202
    def match(note: dict) -> bool:
        params = note.get("params") or {}
        return (
            note.get("method") == "lspAgent/event"
            and params.get("runId") == run_id
            and params.get("kind") == "done"
        )

    return match


REACHED: list[float] = []  # lspAgent.ask -> the model has the request (mid-request cancels)


def cancel_once(client: WireClient, model: ScriptedModelServer, mid_request: bool) -> tuple[float, str]:
    """Start a run, cancel it (at once or once the model holds its request); (seconds to done, stop reason)."""
    taken = len(model.requests)
    asked = time.perf_counter()
    run_id = client.request(
        "workspace/executeCommand", {"command": "lspAgent.ask", "arguments": [{"task": "wait"}]}
    )["runId"]
    if mid_request:
        deadline = time.monotonic() + 60
        while len(model.requests) == taken and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(model.requests) > taken, "the run never reached the model"
        REACHED.append(time.perf_counter() - asked)
        time.sleep(random.uniform(0.0, 0.2))
    started = time.perf_counter()
    client.request(
        "workspace/executeCommand", {"command": "lspAgent.cancel", "arguments": [{"runId": run_id}]}
    )
    done = client.wait_notification(_done_of(run_id), timeout=60)
    return time.perf_counter() - started, str(done["params"].get("stopReason"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cancels", type=int, default=24)
    args = parser.parse_args()
    random.seed(7)
    script = [{"content": "still thinking", "delay": DELAY} for _ in range(args.cancels * 2)]
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(script) as model:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "app.py").write_text("def main():\n    return 1\n")
        client = WireClient(OURS, root, env={"XDG_CACHE_HOME": str(Path(tmp) / "cache")})
        options = {"lspAgent": {"model": "openai/scripted", "apiBase": model.base_url, "apiKey": "test"}}
        # no workDoneProgress: this blocking client does not read while it polls the model, and an unanswered
        # window/workDoneProgress/create would hold each run up to 10 s before it starts
        client.initialize(root, options, {})
        cancel_once(client, model, mid_request=True)  # warm-up: litellm's import, the first connection
        times: dict[bool, list[float]] = {False: [], True: []}
        reasons: set[str] = set()
        status_times: list[float] = []
        for i in range(args.cancels):
            seconds, reason = cancel_once(client, model, mid_request=bool(i % 2))
            times[bool(i % 2)].append(seconds)
            reasons.add(reason)
            started = time.perf_counter()
            status = client.request(
                "workspace/executeCommand", {"command": "lspAgent.status", "arguments": []}
            )
            status_times.append(time.perf_counter() - started)
        active = [r for r in status["runs"] if r["state"] in ("starting", "running")]
        client.close()

    every = times[False] + times[True]
    print(f"lspAgent.cancel -> done event, {len(every)} cancels against a model that delays {DELAY:.0f} s")
    print(f"  stop reasons: {sorted(reasons)}; runs still active afterwards: {len(active)}")
    print(f"  (lspAgent.ask -> model request in flight: p50 {percentile(REACHED, 50):.2f} s)")
    rows = (
        ("baseline: lspAgent.status round trip", status_times),
        ("cancel while the run starts", times[False]),
        ("cancel mid model request", times[True]),
        ("all cancels", every),
    )
    for label, values in rows:
        print(
            f"  {label:38s} p50 {percentile(values, 50) * 1000:8.1f} ms   p95 {percentile(values, 95) * 1000:8.1f} ms"
        )
    p95 = percentile(every, 95)
    verdict = "met" if p95 <= TARGET_SECONDS and reasons == {"cancelled"} and not active else "MISSED"
    print(f"  target cancel p95 <= {TARGET_SECONDS:.0f} s: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
