"""What settling costs while the user types: after each keystroke in a 5,000-line file with a pending proposal of
10 hunks, the server checks which hunks the text now holds (settle.applied_in_text) before republishing hints.

    python benchmarks/settle_cost.py [--keystrokes 300]

Baseline, measured in the same run: the rebase the hints already do on every keystroke (FileProposal.rebased).
Only refused hunks are candidates; one is refused because the user edited its lines (a cheap substring test
rules it out), and in the second series one hunk was applied by hand, so the full line-alignment check runs on
every keystroke. Target: within 10% of the rebase alone (this runs in the 200 ms-debounced hint refresh, never
on the codeAction path).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.server.edits import DocumentState, file_proposals  # noqa: E402
from lsp_agent.server.settle import applied_in_text  # noqa: E402
from lsp_agent.workspace.proposal import FileChange, Proposal  # noqa: E402

LINES = 5000


def texts() -> tuple[str, str]:
    """A 5,000-line module and the agent's version with 10 one-line changes spread over it."""
    base = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(LINES // 3))
    new = base
    for i in range(0, LINES // 3, LINES // 30):
        new = new.replace(f"    return x + {i}\n", f"    return x + {i}  # checked\n", 1)
    return base, new


def p95(samples: list[float]) -> float:
    """The 95th percentile in milliseconds."""
    return sorted(samples)[int(len(samples) * 0.95) - 1] * 1000


def series(base: str, new: str, start: str, keystrokes: int, check: bool) -> list[float]:
    """Time one check per keystroke typed at the end of the file."""
    (fp,) = file_proposals(Path("/tmp"), Proposal(changes=[FileChange("m.py", "modify", base, new)]))
    text = start
    times: list[float] = []
    for k in range(keystrokes):
        text = text + ("#" if k % 40 else "\n")
        started = time.perf_counter()
        if check:
            applied_in_text(fp, DocumentState(text))
        else:
            fp.rebased(text)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    """Print rebase-only vs rebase + applied-check per keystroke."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--keystrokes", type=int, default=300)
    args = parser.parse_args()
    base, new = texts()
    edited = base.replace(
        "    return x + 500\n", "    return x + 5000\n", 1
    )  # a refused hunk (user edited it)
    applied = edited.replace(
        "    return x + 1000\n", "    return x + 1000  # checked\n", 1
    )  # one applied by hand
    for name, start in (("one hunk refused", edited), ("refused + one applied", applied)):
        rebase = series(base, new, start, args.keystrokes, check=False)
        settle = series(base, new, start, args.keystrokes, check=True)
        print(
            f"{name}: rebase only p50 {statistics.median(rebase) * 1000:.2f} ms p95 {p95(rebase):.2f} ms | "
            f"rebase + applied-check p50 {statistics.median(settle) * 1000:.2f} ms p95 {p95(settle):.2f} ms | "
            f"ratio p95 {p95(settle) / max(p95(rebase), 1e-9):.2f}x"
        )


if __name__ == "__main__":
    main()
