"""Model-chosen regexes: the pathological `(a+)+$` and an ordinary search, before (Python's re) and after.

Run: python benchmarks/regex_safety.py [--n 26]

Baseline, measured in the same run: Python's `re`, the engine search_text used before, on one line of n `a`s and
a `!` (each 2 more characters quadruple its time), with another thread ticking every 10 ms to show how long the
server stood still. After: the search_text tool through the tool registry (RE2) on a workspace holding that line,
with the same ticking thread. Also ordinary regexes over a 20,000-line file, re against the tool's engine.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from lsp_agent.tools.patterns import compile_search  # noqa: E402
from lsp_agent.tools.registry import ToolContext, default_registry  # noqa: E402
from lsp_agent.workspace.overlay import Overlay  # noqa: E402

PATTERN = "(a+)+$"


def timed_with_ticks(work: Callable[[], object]) -> tuple[float, float]:
    """(seconds `work` took in a worker thread, longest gap between 10 ms ticks of this thread meanwhile)."""
    worker = threading.Thread(target=work)
    started = last = time.perf_counter()
    longest = 0.0
    worker.start()  # returns only when this thread gets the GIL back
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
        time.sleep(0.01)
    worker.join()
    longest = max(longest, time.perf_counter() - last)
    return time.perf_counter() - started, longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=26, help="number of 'a's before the '!' (26 takes ~10 s in re)"
    )
    args = parser.parse_args()
    line = "a" * args.n + "!"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "evil.txt").write_text(line + "\n")
        ctx = ToolContext(root=root, overlay=Overlay(root))
        registry = default_registry()
        results: list = []

        def tool_search() -> None:
            results.append(
                asyncio.run(registry.execute("search_text", {"pattern": PATTERN, "regex": True}, ctx))
            )

        before, before_gap = timed_with_ticks(lambda: re.compile(PATTERN).search(line))
        after, after_gap = timed_with_ticks(tool_search)
        assert results[0].ok and "No matches" in results[0].output, results[0].output
    print(f"pathological {PATTERN!r} over {args.n} 'a's and '!':")
    print(f"  baseline Python re   {before:9.3f} s   other thread stalled up to {before_gap:7.3f} s")
    print(f"  search_text (RE2)    {after:9.3f} s   other thread stalled up to {after_gap:7.3f} s")
    print(f"  ratio after/before   {after / before:9.5f}")
    ordinary()


def ordinary() -> None:
    """Everyday regexes over 20,000 lines: the old engine line by line, as search_text did, against the new one.

    Like search_text, each search stops at its first 100 matching lines.
    """
    lines = [f"    def method_{i}(self, value): return value * {i}  # widget {i % 97}" for i in range(20_000)]
    text = "\n".join(lines) + "\n"
    print("ordinary regexes over 20,000 lines (first 100 matching lines, as search_text stops there):")
    for pattern in (r"def method_1999\d\(", r"return value \* \d+7 ", r"widget (12|34)$"):
        old = re.compile(pattern)
        new = compile_search(pattern, is_regex=True, case_sensitive=True)
        base, n_old = best(lambda old=old: len(list(islice((s for s in lines if old.search(s)), 100))))
        mine, n_new = best(lambda new=new: len(list(islice(new.matching_lines(text), 100))))
        assert n_old == n_new, (n_old, n_new)
        print(
            f"  {pattern!r:28} {n_new:4} lines   re {base * 1000:7.1f} ms   new {mine * 1000:7.1f} ms   "
            f"ratio {mine / base:.2f}"
        )


def best(run: Callable[[], int]) -> tuple[float, int]:
    """(fastest of 5 runs in seconds, what the run returned)."""
    times, found = [], 0
    for _ in range(5):
        started = time.perf_counter()
        found = run()
        times.append(time.perf_counter() - started)
    return min(times), found


if __name__ == "__main__":
    main()
