"""MCP call overhead: the manager (own loop thread) and the registry path vs the bare SDK client in one task.

Baseline, measured in the same run: `mcp.Client` on the stdio test server, awaited directly by the caller; the
three paths take turns (10 calls each) so changing machine load hits them alike.
Prints startup and per-call latencies and their ratios to the baseline.

    python benchmarks/mcp_overhead.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lsp_agent.mcp import McpManager, register_mcp_tools  # noqa: E402
from lsp_agent.mcp.config import parse_server  # noqa: E402
from lsp_agent.tools.registry import ToolContext, ToolRegistry  # noqa: E402
from lsp_agent.workspace.overlay import Overlay  # noqa: E402

NOTES = ROOT / "tests" / "mcp" / "servers" / "notes_server.py"


async def measure(calls: int, chunk: int = 10) -> dict[str, list[float]]:
    """Startup and per-call seconds of the three paths, the calls taking turns in chunks (fair under load)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    times: dict[str, list[float]] = {"base_start": [], "start": [], "base": [], "direct": [], "registry": []}
    started = time.perf_counter()
    params = StdioServerParameters(command=sys.executable, args=[str(NOTES)])
    async with Client(params) as client:
        await client.list_tools()
        times["base_start"].append(time.perf_counter() - started)
        manager = McpManager([parse_server("notes", {"command": sys.executable, "args": [str(NOTES)]})])
        try:
            started = time.perf_counter()
            errors = await manager.ensure_started()
            times["start"].append(time.perf_counter() - started)
            assert not errors, errors
            registry = ToolRegistry()
            register_mcp_tools(registry, manager)
            with tempfile.TemporaryDirectory() as tmp:
                ctx = ToolContext(root=Path(tmp), overlay=Overlay(Path(tmp)))
                for first in range(0, calls, chunk):
                    for i in range(first, min(first + chunk, calls)):
                        t = time.perf_counter()
                        await client.call_tool("add", {"a": i, "b": 1})
                        times["base"].append(time.perf_counter() - t)
                    for i in range(first, min(first + chunk, calls)):
                        t = time.perf_counter()
                        await manager.call_tool("notes", "add", {"a": i, "b": 1})
                        times["direct"].append(time.perf_counter() - t)
                    for i in range(first, min(first + chunk, calls)):
                        t = time.perf_counter()
                        result = await registry.execute("notes__add", {"a": i, "b": 1}, ctx)
                        times["registry"].append(time.perf_counter() - t)
                        assert result.ok and result.output == str(i + 1)
        finally:
            await manager.aclose()
    return times


def describe(label: str, times: list[float], base: list[float]) -> str:
    """Median and p95 in milliseconds with the ratio of medians to the baseline."""
    med, p95 = statistics.median(times), sorted(times)[int(len(times) * 0.95) - 1]
    ratio = med / statistics.median(base)
    return f"{label:<28} median {med * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms  x{ratio:.2f} of baseline"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    times = await measure(args.calls)
    base_start, start, base = times["base_start"][0], times["start"][0], times["base"]
    print(f"calls per path: {args.calls} (the paths take turns, 10 calls at a time)")
    print(
        f"{'startup (connect + list)':<28} baseline {base_start:.2f} s  manager {start:.2f} s  x{start / base_start:.2f}"
    )
    print(describe("SDK client (baseline)", base, base))
    print(describe("McpManager.call_tool", times["direct"], base))
    print(describe("registry.execute (bridge)", times["registry"], base))


if __name__ == "__main__":
    asyncio.run(main())
