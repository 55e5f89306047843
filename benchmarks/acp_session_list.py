"""session/list with 1,000 stored conversations: time per page, through the real protocol.

A private cache dir gets N conversations (default 1,000) spread over 10 folders, as the CLI, the language server
and ACP write them (each with a few exchanges; the ACP ones with a replay history), then `lsp-agent acp` is
spawned and driven by the SDK's client, as an editor drives it. Reported, client side:

1. the first session/list of the process (it reads every file once);
2. each page of walking the whole list with its cursors (files unchanged: one stat each);
3. a page of one folder (`cwd` filter);
4. a page after one conversation was saved again (that file re-read).

    python benchmarks/acp_session_list.py [--sessions 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp import PROTOCOL_VERSION, spawn_agent_process  # noqa: E402
from acp.schema import ClientCapabilities, Implementation  # noqa: E402

from lsp_agent.agent.conversation.memory import Exchange  # noqa: E402
from lsp_agent.agent.conversation.session import Session  # noqa: E402
from lsp_agent.agent.conversation.store import ConversationStore  # noqa: E402

FRONT_ENDS = ("cli", "lsp", "acp")


class QuietClient:
    """A client that accepts every notification and asks nothing."""

    async def session_update(self, **kwargs: Any) -> None:
        return None


def fill_store(directory: Path, folders: list[Path], count: int) -> None:
    """`count` conversations of every front-end, a few exchanges each (ACP ones with a replay history)."""
    store = ConversationStore(directory)
    for n in range(count):
        exchanges = [
            Exchange(
                f"run-{n}-{k}", f"Task {k} of conversation {n}: fix the parser", "Done. " * 60, "complete"
            )
            for k in range(4)
        ]
        front_end = FRONT_ENDS[n % len(FRONT_ENDS)]
        extra = None
        if front_end == "acp":
            history = [
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "words " * 40}}
                for _ in range(30)
            ]
            extra = {"acp": {"mode": "code", "history": history, "title": f"Conversation {n}"}}
        store.save(
            Session(f"bench-{n:05d}", exchanges),
            root=folders[n % len(folders)],
            front_end=front_end,
            extra=extra,
        )


async def timed(call: Any) -> tuple[float, Any]:
    """(milliseconds, result) of one awaited call."""
    start = time.perf_counter()
    result = await call
    return (time.perf_counter() - start) * 1000, result


async def measure(env: dict[str, str], folders: list[Path], store_dir: Path, rounds: int) -> dict[str, Any]:
    """The four figures, driving a spawned `lsp-agent acp`."""
    out: dict[str, Any] = {}
    async with spawn_agent_process(QuietClient(), sys.executable, "-m", "lsp_agent", "acp", env=env) as (
        conn,
        _,
    ):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bench", version="1"),
        )
        out["first"], first = await timed(conn.list_sessions())
        out["page_size"] = len(first.sessions)
        pages: list[float] = []
        listed = 0
        for _ in range(rounds):
            cursor, listed = None, 0
            while True:
                ms, page = await timed(conn.list_sessions(cursor=cursor))
                pages.append(ms)
                listed += len(page.sessions)
                cursor = page.next_cursor
                if cursor is None:
                    break
        out["pages"], out["listed"] = pages, listed
        out["folder"] = [(await timed(conn.list_sessions(cwd=str(folders[3]))))[0] for _ in range(rounds * 5)]
        changed: list[float] = []
        for n in range(rounds * 5):
            path = store_dir / f"bench-{n:05d}.json"
            os.utime(path)  # saved again: its time changed
            changed.append((await timed(conn.list_sessions()))[0])
        out["changed"] = changed
    return out


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        folders = [home / f"project-{k}" for k in range(10)]
        for folder in folders:
            folder.mkdir()
        store_dir = home / "cache" / "lsp-agent" / "sessions"
        start = time.perf_counter()
        fill_store(store_dir, folders, args.sessions)
        size = sum(p.stat().st_size for p in store_dir.glob("*.json"))
        print(
            f"stored {args.sessions} conversations ({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
        env.update(
            XDG_CACHE_HOME=str(home / "cache"),
            XDG_CONFIG_HOME=str(home / "config"),
            LITELLM_LOCAL_MODEL_COST_MAP="True",
        )
        figures = asyncio.run(measure(env, folders, store_dir, args.rounds))
    pages = figures["pages"]
    print(f"first session/list of the process (reads every file): {figures['first']:.1f} ms")
    print(
        f"walking all {figures['listed']} sessions, {figures['page_size']} a page: median "
        f"{statistics.median(pages):.1f} ms per page (p90 {sorted(pages)[int(len(pages) * 0.9)]:.1f} ms, "
        f"{len(pages)} pages)"
    )
    print(f"one folder's page (cwd filter): median {statistics.median(figures['folder']):.1f} ms")
    print(
        f"a page after one conversation was saved again: median {statistics.median(figures['changed']):.1f} ms"
    )


if __name__ == "__main__":
    main()
