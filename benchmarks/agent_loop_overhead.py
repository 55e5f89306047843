"""Per-step overhead of the agent loop (everything but waiting for the model) on a generated 1,000-file workspace.

Baseline, measured in the same run: the raw litellm.acompletion round trip to the same scripted server with the
same growing conversation. The agent's model wait is timed around ModelClient.complete; the loop overhead per
step is (run wall time - model wait) / steps and covers tool execution, parsing, permission checks, token
counting and compaction checks, events, overlay and proposal building.

    python benchmarks/agent_loop_overhead.py [--files 1000] [--steps 60]
    LSP_AGENT_STREAM=false python benchmarks/agent_loop_overhead.py   # replies unstreamed (the setting's env name)

Target: <= 20 ms per step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.agent.loop.run import AgentRun  # noqa: E402
from lsp_agent.agent.model.client import ModelClient, ModelReply, get_litellm  # noqa: E402
from lsp_agent.agent.model.stream_reply import assemble_stream  # noqa: E402
from lsp_agent.settings_sources import load_settings  # noqa: E402
from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

TARGET_MS = 20.0
PER_TOOL: dict[str, list[float]] = {}


def make_workspace(root: Path, files: int) -> list[str]:
    """`files` Python modules of ~40 lines in 10-file packages, plus a .gitignore; returns their paths."""
    paths = []
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for i in range(files):
        pkg = root / f"pkg_{i // 10:03d}"
        pkg.mkdir(exist_ok=True)
        rel = f"pkg_{i // 10:03d}/mod_{i % 10}.py"
        body = [f'"""Module {i}."""', "", "import os", ""]
        for f in range(6):
            body += [
                f"def func_{i}_{f}(value):",
                f'    """Function {f} of module {i}."""',
                f"    total = value * {f}",
            ]
            body += ["    for item in range(3):", "        total += item", "    return total", ""]
        (root / rel).write_text("\n".join(body) + "\n")
        paths.append(rel)
    return paths


def make_script(paths: list[str], steps: int, *, whole_search: bool, prompt: bool = False) -> list[dict]:
    """A realistic mix of reads, searches, listings and edits, then task_complete."""
    script = []
    for s in range(steps):
        path = paths[(s * 37) % len(paths)]
        kind = s % 5
        if kind == 0:
            call = {"name": "read_file", "arguments": {"path": path}}
        elif kind == 1:
            scope = {} if whole_search else {"path": path.split("/")[0]}
            call = {
                "name": "search_text",
                "arguments": {"pattern": f"def func_{(s * 37) % len(paths)}_3", **scope},
            }
        elif kind == 2:
            call = {"name": "list_files", "arguments": {"path": path.split("/")[0]}}
        elif kind == 3:
            n = (s * 37) % len(paths)
            call = {
                "name": "edit_file",
                "arguments": {
                    "path": path,
                    "old_text": "    total = value * 2\n",
                    "new_text": f"    total = value * 2 + {n}\n",
                },
            }
        else:
            call = {"name": "get_file_info", "arguments": {"path": path}}
        script.append(_step(f"Step {s}: next I use {call['name']}.", call, prompt))
    script.append(_step("done", {"name": "task_complete", "arguments": {"summary": "benchmark"}}, prompt))
    return script


def _step(thought: str, call: dict, prompt: bool) -> dict:
    """A script step: a native tool call, or the THOUGHT/ACTION text of prompt mode."""
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    if prompt:
        return {
            "content": f"<THOUGHT>{thought}</THOUGHT>\n<ACTION>{json.dumps(call)}</ACTION>",
            "usage": usage,
        }
    return {"content": thought, "tool_calls": [call], "usage": usage}


class TimedClient(ModelClient):
    """A ModelClient that adds up the time spent waiting for replies."""

    waited: float = 0.0
    waited_cpu: float = 0.0  # this thread's CPU time inside complete (litellm's request building and parsing)

    async def complete(self, messages, tools=None, on_text=None) -> ModelReply:  # type: ignore[override]
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            return await super().complete(messages, tools, on_text)
        finally:
            self.waited += time.perf_counter() - start
            self.waited_cpu += time.thread_time() - start_cpu


@dataclass
class RunTimes:
    """What one agent run over a script took: wall and main-thread CPU seconds, split at the model calls."""

    wall: float
    waited: float  # wall seconds inside ModelClient.complete
    cpu: float  # this thread's CPU seconds for the whole run
    waited_cpu: (
        float  # ... of which inside ModelClient.complete (request building, streaming, reply assembly)
    )
    tools: float  # seconds of tool execution (worker threads)
    iterations: int
    requests: list[dict]


async def agent_run(root: Path, script: list[dict], mode: str, profile: str = "full") -> RunTimes:
    """Times of one agent run over the script (a fresh scripted server; settings from flags and the environment)."""
    tool_seconds = [0.0]

    def sink(event) -> None:
        if event.kind == "tool_result":
            tool_seconds[0] += event.data["seconds"]
            PER_TOOL.setdefault(event.data["name"], []).append(event.data["seconds"])

    with ScriptedModelServer(script) as server:
        flags = {
            "model": "openai/scripted",
            "api_base": server.base_url,
            "api_key": "x",
            "tool_calling": mode,
            "max_iterations": len(script) + 1,
            "profile": profile,
        }
        settings, errors = load_settings(
            None, flags=flags
        )  # the environment fills the rest (LSP_AGENT_STREAM)
        assert not errors, errors
        client = TimedClient(settings)
        run = AgentRun("benchmark task", settings, root, model_client=client, sink=sink)
        start, start_cpu = time.perf_counter(), time.thread_time()
        result = await run.run()
        wall, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
        requests = list(server.requests)
    assert result.success, result
    return RunTimes(wall, client.waited, cpu, client.waited_cpu, tool_seconds[0], result.iterations, requests)


async def raw_round_trips(requests: list[dict], script: list[dict]) -> list[float]:
    """The baseline: litellm.acompletion with the agent's own request bodies, replayed to a fresh server."""
    litellm = get_litellm()
    times = []
    with ScriptedModelServer(script) as server:
        for body in requests:
            kwargs = {"tools": body["tools"]} if body.get("tools") else {}
            start = time.perf_counter()
            await litellm.acompletion(
                model="openai/scripted",
                api_base=server.base_url,
                api_key="x",
                messages=body["messages"],
                max_retries=0,
                **kwargs,
            )
            times.append(time.perf_counter() - start)
    return times


async def assembly_cost(requests: list[dict], script: list[dict], repeat: int = 200) -> tuple[float, float]:
    """CPU ms to gather one streamed reply: ours (assemble_stream) and litellm's stream_chunk_builder, same chunks."""
    litellm = get_litellm()
    body = requests[len(requests) // 2]
    with ScriptedModelServer(script) as server:
        kwargs = {"tools": body["tools"]} if body.get("tools") else {}
        stream = await litellm.acompletion(
            model="openai/scripted",
            api_base=server.base_url,
            api_key="x",
            messages=body["messages"],
            stream=True,
            stream_options={"include_usage": True},
            **kwargs,
        )
        chunks = [chunk async for chunk in stream]
    costs = []
    for gather in (
        lambda: assemble_stream(litellm, chunks),
        lambda: litellm.stream_chunk_builder(chunks, messages=body["messages"]),
    ):
        start = time.thread_time()
        for _ in range(repeat):
            gather()
        costs.append((time.thread_time() - start) / repeat * 1000)
    return costs[0], costs[1]


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument(
        "--profile", choices=["full", "small"], default="full", help="the agent's prompt and tool profile"
    )
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    get_litellm()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_workspace(root, args.files)
        streamed = "streamed" if load_settings(None)[0].stream else "unstreamed (LSP_AGENT_STREAM=false)"
        print(
            f"workspace: {args.files} files, {args.steps} tool steps + task_complete per run; replies {streamed}"
        )
        # Warm-up: litellm's first request imports more of itself.
        await agent_run(root, make_script(paths, 3, whole_search=False), "native")
        rows = []
        PER_TOOL.clear()
        for label, mode, whole in (
            ("native, scoped search", "native", False),
            ("prompt, scoped search", "prompt", False),
            ("native, whole-workspace search", "native", True),
        ):
            script = make_script(paths, args.steps, whole_search=whole, prompt=mode == "prompt")
            times = await agent_run(root, script, mode, args.profile)
            baseline = await raw_round_trips(times.requests, script)
            rows.append((label, times, statistics.mean(baseline) * 1000))
        print_rows(rows)
        ours, builder = await assembly_cost(rows[0][1].requests, script)
        print(
            f"gathering one streamed reply (CPU): {ours:.2f} ms; litellm.stream_chunk_builder on the same chunks "
            f"{builder:.2f} ms ({ours / builder:.2f}x)"
        )


def print_rows(rows: list[tuple[str, RunTimes, float]]) -> None:
    """The table, the per-tool times and the verdicts."""
    print(
        f"{'run':32} {'steps':>5} {'wall s':>7} {'model s':>8} {'tools ms':>9} {'loop ms':>8} "
        f"{'total ms':>9} {'raw rtt ms':>11} {'total/rtt':>9} {'loop cpu ms':>11} {'model cpu ms':>12}"
    )
    for label, t, rtt_ms in rows:
        per_step = 1000 / t.iterations
        total_ms = (t.wall - t.waited) * per_step
        own_ms = (t.wall - t.waited - t.tools) * per_step
        print(
            f"{label:32} {t.iterations:5d} {t.wall:7.2f} {t.waited:8.2f} {t.tools * per_step:9.2f} {own_ms:8.2f} "
            f"{total_ms:9.2f} {rtt_ms:11.2f} {total_ms / rtt_ms:9.2f} {(t.cpu - t.waited_cpu) * per_step:11.2f} "
            f"{t.waited_cpu * per_step:12.2f}"
        )
    print("per step: tools = tool execution, loop = everything else outside the model wait, total = both")
    print(
        "loop cpu = the event-loop thread's CPU outside the model call (steadier than wall time on a busy machine); "
        "model cpu = its CPU inside the call (litellm building the request, reading the reply or stream)"
    )
    per_tool = ", ".join(f"{name} {statistics.mean(t) * 1000:.1f}" for name, t in sorted(PER_TOOL.items()))
    print(f"tool ms per call (all runs): {per_tool}")
    for label, t, _ in rows[:2]:
        total_ms = (t.wall - t.waited) / t.iterations * 1000
        own_ms = (t.wall - t.waited - t.tools) / t.iterations * 1000
        verdict = "meets" if total_ms <= TARGET_MS else "MISSES"
        print(
            f"{label}: {total_ms:.2f} ms/step outside the model ({own_ms:.2f} ms loop) {verdict} the {TARGET_MS:.0f} ms target"
        )


if __name__ == "__main__":
    asyncio.run(main())
