"""Scratch-copy cost for a 5,000-file workspace: the sandbox's copy vs a plain shutil.copytree baseline.

Also the cost of showing the agent's view (files it read, unsaved editor buffers) in an existing copy.

Run: python benchmarks/sandbox_copy.py [--files 5000] [--repeat 3]
Prints the median seconds of each way to get a runnable scratch copy, and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.sandbox.isolation import current_isolation  # noqa: E402
from lsp_agent.sandbox.scratch import ScratchWorkspace  # noqa: E402
from lsp_agent.sandbox.session import Sandbox  # noqa: E402
from lsp_agent.workspace.overlay import Overlay  # noqa: E402

PER_DIR = 100


def make_workspace(root: Path, files: int) -> None:
    """`files` Python modules of ~3 KB in directories of 100."""
    body = "".join(f"def function_{i}(value):\n    return value * {i} + {i % 7}\n\n\n" for i in range(50))
    for n in range(files):
        directory = root / f"pkg{n // PER_DIR:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"module_{n:05d}.py").write_text(f'"""Module {n}."""\n\n{body}')


def interleaved(cases: list[tuple[str, Callable[[], None]]], repeat: int) -> list[tuple[str, float]]:
    """Median seconds of each case, the cases taking turns so machine load hits them alike."""
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return [(name, statistics.median(samples[name])) for name, _ in cases]


def main() -> int:
    """Build the workspace, time each way, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    isolation = current_isolation()
    with tempfile.TemporaryDirectory(prefix="lsp-agent-bench-") as tmp:
        root = Path(tmp) / "workspace"
        make_workspace(root, args.files)
        overlay = Overlay(root)
        for i in range(3):  # a few proposed edits, as in a real run
            overlay.write_text(f"pkg000/module_{i:05d}.py", f"EDITED = {i}\n")
        # The agent's view in an editor: 200 files read through the buffer hook, 5 of them unsaved buffers.
        buffers = {root / f"pkg001/module_{100 + i:05d}.py": f"UNSAVED = {i}\n" for i in range(5)}
        in_editor = Overlay(
            root, read_disk=lambda path: buffers.get(path) or path.read_text(encoding="utf-8")
        )
        for n in range(100, 300):
            in_editor.read_text(f"pkg{n // PER_DIR:03d}/module_{n:05d}.py")
        kept = ScratchWorkspace(root, mode="overlay" if isolation.overlay else "copy", parent=Path(tmp))
        assert len(kept._agent_view(in_editor)) == len(
            buffers
        )  # the buffers, and only they, differ from disk
        subprocess.run(["sync"], check=False)
        targets = iter(range(10_000))

        def baseline() -> None:
            dest = Path(tmp) / f"copytree-{next(targets)}"
            shutil.copytree(root, dest)
            shutil.rmtree(dest)

        def scratch(mode: str) -> None:
            work = ScratchWorkspace(root, mode=mode, parent=Path(tmp))
            work.sync_in(overlay)
            work.close()

        def first_run() -> None:
            with Sandbox(root, isolation=isolation, scratch_parent=Path(tmp)) as box:
                result = box.run(["true"], overlay, timeout=30)
                assert result.exit_code == 0, result.format(30)

        def resync() -> None:
            kept.sync_in(in_editor)

        def bare_true() -> None:
            subprocess.run(["true"], check=True)

        cases = [
            ("shutil.copytree + rmtree (baseline)", baseline),
            ("scratch copy, plain copy mode (+ sync_in, close)", lambda: scratch("copy")),
        ]
        if isolation.overlay:
            cases.append(("scratch copy, overlayfs mode (+ sync_in, close)", lambda: scratch("overlay")))
        cases.append(("sandbox: scratch + first isolated run of `true` + close", first_run))
        cases.append(("sync_in: 200 files read, 5 unsaved buffers", resync))
        cases.append(("bare subprocess `true` (no sandbox)", bare_true))
        rows = interleaved(cases, args.repeat)
        base = rows[0][1]
        kept.close()
    print(
        f"workspace: {args.files} files; isolation here: {isolation.mechanism}, overlay={isolation.overlay} "
        f"bwrap={isolation.bwrap} unshare_net={isolation.unshare_net}; median of {args.repeat}"
    )
    for name, seconds in rows:
        print(f"{name:58s} {seconds * 1000:9.1f} ms   ratio to baseline {seconds / base:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
