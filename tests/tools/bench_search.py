"""Benchmark the workspace tools on a generated 1,000-file workspace (not collected by pytest).

Run: python tests/tools/bench_search.py [--files 1000]
Prints the median time of each tool call and its ratio to a baseline measured in the same run: GNU `grep -rn`
over the same tree for the searches, and a bare os.walk for list_files.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from lsp_agent.tools import rg  # noqa: E402
from lsp_agent.tools.registry import ToolContext, default_registry  # noqa: E402
from lsp_agent.workspace.overlay import Overlay  # noqa: E402

MODULE = '''"""Module {i}."""

import os


class Widget{i}:
    """A widget."""

    def __init__(self, size):
        self.size = size

{body}
'''
METHOD = "    def method_{j}(self, value):\n        total = value + {j}\n        return total * self.size\n\n"


def make_workspace(root: Path, files: int) -> None:
    """`files` Python files of ~100 lines in 20 packages, plus an ignored build dir."""
    body = "".join(METHOD.format(j=j) for j in range(22))
    for i in range(files):
        pkg = root / "src" / f"pkg{i % 20}"
        pkg.mkdir(parents=True, exist_ok=True)
        text = MODULE.format(i=i, body=body)
        if i == files - 7:
            text += "RARE_MARKER_TOKEN = True\n"
        (pkg / f"mod{i}.py").write_text(text)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "junk.py").write_text("RARE_MARKER_TOKEN = 1\n")


def _no_rg(run):
    """Run with the rg prefilter switched off."""
    rg.ENABLED = False
    try:
        return run()
    finally:
        rg.ENABLED = True


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_workspace(root, args.files)
        registry = default_registry()
        ctx = ToolContext(root=root, overlay=Overlay(root))
        ctx.overlay.write_text(
            "src/pkg0/mod0.py", ctx.overlay.read_text("src/pkg0/mod0.py") + "OVERLAY_ONLY = 1\n"
        )

        def tool(name: str, **kw):
            def run():
                res = asyncio.run(registry.execute(name, kw, ctx))
                assert res.ok, res.output
                return res

            return run

        def grep(pattern: str, *flags: str):
            return lambda: subprocess.run(
                ["grep", "-rn", *flags, "--exclude-dir=build", pattern, "src"], cwd=root, capture_output=True
            )

        def bare_walk():
            return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]

        have_grep = shutil.which("grep") is not None
        cases = [
            ("list_files **/*.py", tool("list_files", pattern="**/*.py"), bare_walk, "os.walk"),
            (
                "search_text rare literal (full walk)",
                tool("search_text", pattern="RARE_MARKER_TOKEN"),
                grep("RARE_MARKER_TOKEN"),
                "grep -rn",
            ),
            (
                "search_text rare regex (full walk)",
                tool("search_text", pattern=r"RARE_\w+_TOKEN", regex=True),
                grep(r"RARE_[A-Z]*_TOKEN", "-E"),
                "grep -rnE",
            ),
            (
                "search_text common (stops at 100)",
                tool("search_text", pattern="return total"),
                grep("return total"),
                "grep -rn (all)",
            ),
            (
                "search_text rare literal, Python only",
                lambda: _no_rg(tool("search_text", pattern="RARE_MARKER_TOKEN")),
                grep("RARE_MARKER_TOKEN"),
                "grep -rn",
            ),
            ("read_file 100 lines", tool("read_file", path="src/pkg3/mod3.py"), None, ""),
            ("edit_file miss + candidates", None, None, ""),
        ]
        print(f"workspace: {args.files} files, median of {args.repeat} runs")
        for label, fn, base, base_label in cases:
            if fn is None:
                run = lambda: asyncio.run(  # noqa: E731
                    registry.execute(
                        "edit_file",
                        {
                            "path": "src/pkg3/mod3.py",
                            "old_text": "def method_7(self, valu):",
                            "new_text": "x",
                        },
                        ctx,
                    )
                )
                ours = median_seconds(run, args.repeat)
            else:
                ours = median_seconds(fn, args.repeat)
            line = f"{label:40s} {ours * 1000:8.1f} ms"
            if base is not None and (have_grep or base_label == "os.walk"):
                theirs = median_seconds(base, args.repeat)
                line += f"   baseline {base_label}: {theirs * 1000:7.1f} ms   ratio {ours / theirs:5.2f}"
            print(line)


if __name__ == "__main__":
    main()
