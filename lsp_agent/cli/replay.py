"""`lsp-agent replay TRANSCRIPT`: re-run a recorded run against its recorded model replies and report divergences."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`replay TRANSCRIPT`."""
    p = commands.add_parser(
        "replay", help="re-run a transcript's run against its recorded model replies (no model)"
    )
    p.add_argument("transcript", help="JSONL transcript written by `lsp-agent ask --transcript FILE`")
    p.add_argument("--repo", help="workspace to replay in (default: the one the transcript names)")
    p.add_argument(
        "--run", type=int, default=-1, help="which run of a transcript holding several (default: last)"
    )
    p.add_argument(
        "--allow-exec", action="store_true", help="allow code execution, as `ask --allow-exec` did"
    )
    p.set_defaults(handler=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent replay`: 0 when the run did what the recording did, 1 with the divergences, 2 on bad input."""
    root = Path(args.repo) if getattr(args, "repo", None) else None
    from lsp_agent.replay.recording import RecordingError
    from lsp_agent.replay.runner import replay

    try:
        report = asyncio.run(
            replay(Path(args.transcript), root, run=args.run, allow_exec=getattr(args, "allow_exec", False))
        )
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.render())
    return 0 if report.identical else 1
