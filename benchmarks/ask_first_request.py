"""Time from starting `lsp-agent ask` to its first model request, against the parts it waits for.

`ask` must import litellm (seconds) and refresh the workspace index and its repo map (seconds on a cold cache)
before the first request. Done one after the other the wait is their sum; overlapped it is about the longer one.
Baselines, measured in the same run in fresh processes: `import litellm` alone (the CLI's get_litellm), and
`lsp-agent index` plus the repo map alone. The ratio printed is first request / (import + index): well under 1.0
means the two overlap. With --before DIR (a checkout's directory holding lsp_agent/, e.g. from `git archive`), the
same asks run from that source too, for a before/after ratio.

    python benchmarks/ask_first_request.py [--files 1000] [--runs 3] [--before DIR]

Each run uses a fresh index cache (cold) and then the same cache again (warm: the index is up to date).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.agent_loop_overhead import make_workspace  # noqa: E402
from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

CLI = [sys.executable, "-m", "lsp_agent"]
# `python -m lsp_agent` from another source tree: the editable install's finder is taken out of the way first.
FROM_SOURCE = (
    "import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
    "sys.path.insert(0, sys.argv.pop(1)); runpy.run_module('lsp_agent', run_name='__main__')"
)
IMPORT_LITELLM = "from lsp_agent.agent.model.client import get_litellm; get_litellm()"
INDEX_AND_MAP = (
    "import sys; from pathlib import Path; from lsp_agent.index import IndexConfig, WorkspaceIndex\n"
    "index = WorkspaceIndex(Path(sys.argv[1]), IndexConfig()); index.refresh(); index.repo_map(2000); index.close()"
)


def first_request_seconds(root: Path, env: dict[str, str], source: Path | None = None) -> float:
    """Seconds from spawning `lsp-agent ask` (this checkout's, or `source`'s) to the model's first request."""
    script = [{"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "done"}}]}]
    cli = [sys.executable, "-c", FROM_SOURCE, str(source)] if source else CLI
    with ScriptedModelServer(script) as model:
        argv = [*cli, "ask", "say done", "--repo", str(root), "--model", "openai/scripted"]
        argv += ["--api-base", model.base_url, "--api-key", "bench"]
        started = time.monotonic()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0 or not model.request_times:
            raise SystemExit(f"ask failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return model.request_times[0] - started


def python_seconds(code: str, env: dict[str, str], *args: str) -> float:
    """Wall time of a fresh interpreter running `code`."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, timeout=300)
    return time.monotonic() - started


def main() -> None:
    """Measure cold and warm runs and print the ratios."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000, help="Python files in the generated workspace")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a source tree holding lsp_agent/ to compare with")
    args = parser.parse_args()
    kinds = ["import", "index cold", "ask cold", "index warm", "ask warm"]
    if args.before:
        kinds += ["before cold", "before warm"]
    rows: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        make_workspace(root, args.files)
        for i in range(args.runs):
            base = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / f"cache-{i}-index"), NO_COLOR="1")
            rows["import"].append(python_seconds(IMPORT_LITELLM, base))
            rows["index cold"].append(python_seconds(INDEX_AND_MAP, base, str(root)))
            rows["index warm"].append(python_seconds(INDEX_AND_MAP, base, str(root)))
            env = dict(base, XDG_CACHE_HOME=str(Path(tmp) / f"cache-{i}-ask"))
            rows["ask cold"].append(first_request_seconds(root, env))
            rows["ask warm"].append(first_request_seconds(root, env))
            if args.before:
                env = dict(base, XDG_CACHE_HOME=str(Path(tmp) / f"cache-{i}-before"))
                rows["before cold"].append(first_request_seconds(root, env, args.before))
                rows["before warm"].append(first_request_seconds(root, env, args.before))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"workspace: {args.files} files, {args.runs} run(s), medians in seconds")
    for key, value in med.items():
        print(f"  {key:<11} {value:6.2f}")
    for kind in ("cold", "warm"):
        serial = med["import"] + med[f"index {kind}"]
        print(
            f"{kind}: first request {med[f'ask {kind}']:.2f} s vs import + index {serial:.2f} s: "
            f"ratio {med[f'ask {kind}'] / serial:.2f} (1.0 = no overlap)"
        )
        if args.before:
            print(f"  after / before ({kind}): {med[f'ask {kind}'] / med[f'before {kind}']:.2f}")


if __name__ == "__main__":
    main()
