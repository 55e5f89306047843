"""`lsp-agent rewind [N] [--list]`: back to exchange N of the workspace's conversation, files and conversation both.

The files the exchanges after N applied get their exact text from before back, file by file (a file changed since
the apply is refused, saying why, and stays as it is); the conversation goes on from N (the later exchanges are left
out of the next prompt). Without N: back to before the newest exchange. Exits 1 when a file was refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`rewind [N] [--repo .] [--session ID] [--list]`."""
    p = commands.add_parser(
        "rewind", help="go back to an earlier exchange of the conversation: its files and the conversation"
    )
    p.add_argument(
        "number", nargs="?", type=int, help="the exchange to go back to (default: the one before the last)"
    )
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.add_argument("--session", help="the conversation (default: the workspace's current one)")
    p.add_argument("--list", action="store_true", help="list the exchanges and what each applied")
    p.set_defaults(handler=run_rewind)


def run_rewind(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent rewind`."""
    from lsp_agent.agent.conversation.rewind import default_target, exchange_rows, rewind_on_disk
    from lsp_agent.agent.conversation.store import default_store

    out = sys.stdout
    root = Path(args.repo or ".").expanduser().resolve()
    if not root.is_dir():
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return 2
    store = default_store()
    session_id = args.session or store.current_id(root)
    stored = store.load(session_id) if session_id else None
    if stored is None:
        print(f"not rewound: no conversation in {root} (ask first, or pass --session ID)", file=out)
        return 1
    session = stored.session
    if args.list:
        for row in exchange_rows(session, root):
            print(_row_text(row), file=out)
        print(f"conversation {session.id}: {len(session.exchanges)} exchange(s) | {root}", file=out)
        return 0
    try:
        number = args.number if args.number is not None else default_target(session)
        outcome = rewind_on_disk(session, root, number)
    except ValueError as exc:
        print(f"not rewound: {exc}", file=out)
        return 1
    store.save(session, root=stored.root or root, front_end=stored.front_end or "cli", extra=stored.extra)
    for path in outcome.restored:
        print(f"restored {path}", file=out)
    for problem in outcome.refused:
        print(f"not restored: {problem}", file=out)
    print(f"{outcome.summary()} | conversation {session.id} | {root}", file=out)
    return 1 if outcome.refused else 0


def _row_text(row: dict) -> str:
    """One exchange as a line of --list."""
    marks = " (rewound)" if row["rewound"] else " (retried)" if row["retried"] else ""
    applied = f" | applied {', '.join(row['applied'])}" if row["applied"] else ""
    task = " ".join(str(row["task"]).split())
    task = task if len(task) <= 80 else task[:77] + "..."
    return f"{row['number']:3d}. [{row['outcome']}]{marks} {task}{applied}"
