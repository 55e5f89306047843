"""Per-call cost of running code isolated: the namespace sandbox against the old overlay-only path and a bare
subprocess (the baseline), on a small workspace.

Cases (each a full Sandbox.run of the command, scratch copy kept between calls, except "first run"):
  bare subprocess                 subprocess.run(cmd): no isolation at all (baseline)
  old path (overlay + netns)      unshare --mount --net, overlay mounted at a scratch path, nothing read-only
  namespace sandbox, overlay      the view over the workspace's own path, the rest read-only, private /tmp and home,
                                  own pid/net/ipc/uts namespaces, capabilities dropped
  namespace sandbox, copy view    the same with a copied workspace instead of overlayfs
  namespace sandbox, first run    a new Sandbox per call (scratch dirs made and removed)

Run: python benchmarks/sandbox_exec.py [--repeat 15] [--command true|python]
Prints the median milliseconds of each case and its ratio to the bare subprocess and to the old path.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.sandbox.isolation import Isolation, current_isolation  # noqa: E402
from lsp_agent.sandbox.session import Sandbox  # noqa: E402
from lsp_agent.workspace.overlay import Overlay  # noqa: E402


def make_workspace(root: Path, files: int = 200) -> None:
    """A small Python project."""
    for n in range(files):
        directory = root / f"pkg{n // 50}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"mod_{n}.py").write_text(f"VALUE = {n}\n")


def interleaved(cases: list[tuple[str, Callable[[], None]]], repeat: int) -> dict[str, float]:
    """Median seconds of each case, the cases taking turns so machine load hits them alike."""
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> int:
    """Build the workspace, time each way, print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--command", choices=("true", "python"), default="true")
    args = parser.parse_args()
    here = current_isolation()
    if not here.namespace:
        print("the namespace sandbox does not start on this machine; nothing to measure", file=sys.stderr)
        return 1
    command = ["true"] if args.command == "true" else [sys.executable, "-c", "pass"]
    old = Isolation(overlay=True, bwrap=False, unshare_net=True)  # what ran here before: overlay + netns only
    copy_view = Isolation(overlay=False, bwrap=False, unshare_net=True, namespace=True)
    with tempfile.TemporaryDirectory(prefix="lsp-agent-bench-") as tmp:
        root = Path(tmp) / "workspace"
        make_workspace(root)
        overlay = Overlay(root)
        overlay.write_text("pkg0/mod_0.py", "VALUE = -1\n")
        kept = {
            "old path (overlay + netns)": Sandbox(
                root, isolation=old, allow_unisolated=True, memory_mib=1024
            ),
            "namespace sandbox, overlay": Sandbox(root, isolation=here, memory_mib=1024),
            "namespace sandbox, copy view": Sandbox(root, isolation=copy_view, memory_mib=1024),
        }

        def bare() -> None:
            subprocess.run(command, check=True, cwd=root)

        def in_box(box: Sandbox) -> Callable[[], None]:
            def run() -> None:
                result = box.run(command, overlay, timeout=30)
                assert result.exit_code == 0, result.format(30)

            return run

        def first_run() -> None:
            with Sandbox(root, isolation=here, memory_mib=1024) as box:
                in_box(box)()

        cases = [("bare subprocess (baseline)", bare)]
        cases += [(name, in_box(box)) for name, box in kept.items()]
        cases.append(("namespace sandbox, first run", first_run))
        for _, fn in cases:
            fn()  # warm up: imports, the probe, page cache
        medians = interleaved(cases, args.repeat)
        for box in kept.values():
            box.close()
    base, old_path = medians["bare subprocess (baseline)"], medians["old path (overlay + netns)"]
    print(f"command: {' '.join(command)}; median of {args.repeat}; isolation here: {here}")
    for name, seconds in medians.items():
        print(
            f"{name:34s} {seconds * 1000:8.1f} ms   x{seconds / base:6.1f} bare   x{seconds / old_path:5.2f} old path"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
