"""Reliability of the agent loop against a hostile or failing model: crashes, hangs and time to end.

Part 1, replies: at least 1,000 hypothesis-generated model replies (garbage, truncated JSON, unknown tools, wrong
argument types, 1 MB arguments, NUL and lone surrogates, unclosed tags; native and prompt tool calling) each
drive a real AgentRun over litellm's HTTP path to the scripted server. A crash is an internal error, an ERROR
log record, an event that cannot be sent as UTF-8 JSON or printed, or a run without a `done` event; a hang is a
run still going after 60 s. Baseline, measured in the same run: the same runs with well-formed replies (a
read_file call, then an answer); the figure is hostile run time as a ratio of the well-formed one.

Part 2, faults: each model fault, failing every attempt, under the default retry policy (4 retries, backoff from
1 s) and the given request timeout; prints the message the user reads and the time until the run ended.

    python benchmarks/reliability_model.py [--replies 1000] [--request-timeout 3] [--skip-faults]

Targets: 0 crashes, 0 hangs; every fault ends with one clear message within its bound.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from lsp_agent.agent.loop.run import AgentRun  # noqa: E402
from lsp_agent.agent.model.client import ModelClient, get_litellm  # noqa: E402
from lsp_agent.cli.printer import strict_printer  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402
from lsp_agent.testing.reply_fuzz import HUGE, Verdict, drive, reply_script  # noqa: E402
from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

WELL_FORMED = [
    {"content": "reading", "tool_calls": [{"name": "read_file", "arguments": {"path": "pkg/calc.py"}}]},
    {"content": "add subtracts; it should add"},
]
HUGE_CASES = [
    ("native", [{"content": None, "tool_calls": [{"name": "read_file", "arguments": {"path": HUGE}}]}]),
    ("native", [{"content": None, "tool_calls": [{"name": "edit_file", "arguments": HUGE}]}]),
    ("prompt", [{"content": f'<tool_call>{{"name": "read_file", "arguments": {{"path": "{HUGE}"}}}}'}]),
    ("prompt", [{"content": HUGE}]),
]
FAULTS = {
    "500 server error": {"status": 500},
    "429 with Retry-After: 2": {"status": 429, "headers": {"Retry-After": "2"}},
    "401 unauthorized": {"status": 401, "error": "Incorrect API key provided"},
    "404 model not found": {"status": 404, "error": "The model `scripted` does not exist"},
    "connection dropped mid-stream": {"content": "a reply cut off in the middle", "drop_stream": True},
    "endless slow stream": {"endless": True},
    "timeout (reply after 60 s)": {"content": "too late", "delay": 60},
    "invalid JSON body": {"body": "<html>502 Bad Gateway</html>"},
}


def make_workspace(root: Path) -> Path:
    """A two-file project for the tool calls to read."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "README.md").write_text("# proj\n")
    return root


def hostile_scripts(count: int) -> list[tuple[str, list[dict]]]:
    """`count` generated (mode, replies) scripts, plus the 1 MB cases."""
    scripts: list[tuple[str, list[dict]]] = list(HUGE_CASES)

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(script=reply_script())
    def collect(script: tuple[str, list[dict]]) -> None:
        scripts.append(script)

    collect()
    return scripts


async def replies_part(count: int, root: Path) -> None:
    """Drive the hostile scripts and the well-formed baseline; print crashes, hangs and times."""
    scripts = hostile_scripts(count)
    replies = sum(len(steps) for _, steps in scripts)
    verdicts: list[tuple[Verdict, tuple[str, list[dict]]]] = []
    baseline: list[float] = []
    with ScriptedModelServer([]) as server:
        for _ in range(max(20, count // 20)):
            baseline.append((await drive(server, "native", WELL_FORMED[:1], root)).seconds)
        started = time.monotonic()
        for script in scripts:
            verdicts.append(
                (await drive(server, *script, root, timeout=60, printer=strict_printer()), script)
            )
        total = time.monotonic() - started
    crashes = [(v, s) for v, s in verdicts if v.crash]
    hangs = [(v, s) for v, s in verdicts if v.hang]
    times = [v.seconds for v, _ in verdicts]
    slowest, slow_script = max(verdicts, key=lambda item: item[0].seconds)
    base = statistics.median(baseline)
    print(
        f"replies: {replies} hostile replies in {len(scripts)} runs ({len(HUGE_CASES)} with 1 MB), {total:.0f} s"
    )
    print(f"  crashes {len(crashes)}, hangs {len(hangs)}")
    print(f"  run time: median {statistics.median(times) * 1000:.0f} ms, max {slowest.seconds:.2f} s")
    print(f"  baseline (well-formed replies, same server): median {base * 1000:.0f} ms per run")
    print(f"  ratio hostile/well-formed: median {statistics.median(times) / base:.2f}x")
    print(f"  slowest: {slow_script[0]} mode, {sum(len(str(s)) for s in slow_script[1])} chars of script")
    for verdict, script in (crashes + hangs)[:10]:
        print(f"  FAILED {verdict.crash or 'hang'} on {script!r:.300}")


async def one_fault(name: str, step: dict, root: Path, request_timeout: float) -> tuple[str, float, str, int]:
    """(name, seconds to the end of the run, final message, model requests) for a fault on every attempt."""
    with ScriptedModelServer([step] * 6) as server:
        config = Settings(
            model="openai/scripted",
            api_base=server.base_url,
            request_timeout=request_timeout,
            max_iterations=2,
        )
        client = ModelClient(config, stream="drop_stream" in step)
        started = time.monotonic()
        result = await AgentRun("a task", config, root, model_client=client).run()
        seconds = time.monotonic() - started
        return name, seconds, result.error or f"(no error: {result.stop_reason})", len(server.requests)


async def closed_port(root: Path) -> tuple[str, float, str, int]:
    """The same for a model server that is not running (nothing listens on the port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = Settings(model="openai/local", api_base=f"http://127.0.0.1:{port}/v1", max_iterations=2)
    started = time.monotonic()
    result = await AgentRun("a task", config, root, model_client=ModelClient(config)).run()
    return "closed port (server not running)", time.monotonic() - started, result.error or "(no error)", 0


async def faults_part(root: Path, request_timeout: float) -> None:
    """Every fault at once (each on its own server); print the message and the time to end."""
    results = await asyncio.gather(
        *(one_fault(name, step, root, request_timeout) for name, step in FAULTS.items()), closed_port(root)
    )
    print(f"faults (default retry policy, requestTimeout {request_timeout:g} s, no API key):")
    for name, seconds, message, requests in results:
        print(f"  {name:31} ended in {seconds:5.1f} s after {requests} request(s): {message[:160]}")


def main() -> int:
    """Parse the flags and run both parts."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replies", type=int, default=1000, help="generated scripts (default 1000)")
    parser.add_argument("--request-timeout", type=float, default=3.0, help="seconds (default 3)")
    parser.add_argument("--skip-faults", action="store_true", help="only the generated replies")
    args = parser.parse_args()
    get_litellm()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp) / "proj")
        asyncio.run(replies_part(args.replies, root))
        if not args.skip_faults:
            asyncio.run(faults_part(root, args.request_timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
