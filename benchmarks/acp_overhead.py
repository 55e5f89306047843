"""ACP round-trip overhead of `lsp-agent acp`, against a minimal echo agent on the same SDK, measured in the same run.

Every agent runs as a subprocess on stdio and is driven by the SDK's client side, as an editor would drive it.

1. Per session/update: a prompt that makes the agent send N updates. The baseline is an echo agent (modelled on the
   SDK's examples/echo_agent.py: one agent_message_chunk per prompt block, straight to the connection); ours feeds N
   run events (tool_call / tool_result pairs, as a run emits them) through lsp-agent's real update path
   (TurnTranslator -> UpdatePump -> the connection, with history recording). Reported: ms per update, client side.
2. From session/prompt to the first update: the echo agent's first chunk vs the real `lsp-agent acp` with the
   scripted model answering at once (litellm's HTTP path, the run assembly, the tools, the index already built);
   the first update is the model's first streamed words. Also: the same run in-process without ACP, the time to the
   prompt's answer, and the first prompt of a new process sent 2 s after session/new (litellm warmed meanwhile).

    python benchmarks/acp_overhead.py [--updates 2000] [--prompts 15] [--cold 2]

Targets: per-update time within 2x of the echo agent; first update within 50 ms of the prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp import PROTOCOL_VERSION, run_agent, spawn_agent_process, text_block  # noqa: E402
from acp.helpers import update_agent_message_text  # noqa: E402
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

HERE = Path(__file__).resolve()


class EchoAgent:
    """The baseline: one message chunk per prompt block, sent straight to the connection."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid.uuid4().hex)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        for block in prompt:
            await self.conn.session_update(
                session_id=session_id, update=update_agent_message_text(block.text)
            )
        return PromptResponse(stop_reason="end_turn")


class EventAgent(EchoAgent):
    """lsp-agent's update path: one run event per prompt block through TurnTranslator and UpdatePump."""

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        from lsp_agent.acp.sessions import AcpSession
        from lsp_agent.acp.turns import UpdatePump
        from lsp_agent.acp.updates import TurnTranslator
        from lsp_agent.agent.conversation.session import Session
        from lsp_agent.agent.events import AgentEvent

        root = Path.cwd()
        session = AcpSession(session_id, root, Session(session_id), requests=None, edits=None)  # type: ignore[arg-type]
        translator = TurnTranslator(root, "bench")
        pump = UpdatePump(self.conn, session).start()
        for n, block in enumerate(prompt):
            if n % 2 == 0:
                data = {"id": str(n), "name": "read_file", "arguments": {"path": "calc.py"}}
                event = AgentEvent("tool_call", "bench", data)
            else:
                event = AgentEvent(
                    "tool_result",
                    "bench",
                    {"id": str(n), "name": "read_file", "ok": True, "output": block.text},
                )
            for update in translator.translate(event):
                pump.put(update)
        await pump.drain()
        return PromptResponse(stop_reason="end_turn")


class Recorder:
    """A client that timestamps every update."""

    def __init__(self) -> None:
        self.times: list[float] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.times.append(time.perf_counter())

    async def request_permission(self, **kwargs: Any) -> Any:
        raise RuntimeError("no permissions in this benchmark")


async def drive(
    command: list[str], cwd: Path, env: dict[str, str], prompts: list[list[Any]], pause: float = 0.5
) -> list[tuple[float, float, int]]:
    """(ms to the first update, ms to the response, updates) of each prompt, in one session opened `pause` s
    before the first prompt."""
    client = Recorder()
    out = []
    async with spawn_agent_process(client, command[0], *command[1:], env=env, cwd=cwd) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        await asyncio.sleep(pause)  # the session's announcements are not part of any prompt
        for prompt in prompts:
            client.times.clear()
            started = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=prompt)
            done = time.perf_counter()
            first = client.times[0] if client.times else done
            out.append(((first - started) * 1000, (done - started) * 1000, len(client.times)))
    return out


def per_update(results: list[tuple[float, float, int]]) -> float:
    """Median ms per update over the prompts."""
    return statistics.median(total / max(n, 1) for _, total, n in results)


async def measure_per_update(work: Path, env: dict[str, str], updates: int) -> None:
    """Part 1: ms per session/update, echo agent vs lsp-agent's update path."""
    many = [[text_block(f"line {i} of the output") for i in range(updates)] for _ in range(3)]
    echo = await drive([sys.executable, str(HERE), "--serve", "echo"], work, env, many)
    ours = await drive([sys.executable, str(HERE), "--serve", "events"], work, env, many)
    echo_ms, ours_ms = per_update(echo), per_update(ours)
    print(f"per session/update ({updates} updates per prompt, median of 3 prompts):")
    print(f"  echo agent (baseline)      {echo_ms * 1000:8.1f} us")
    print(
        f"  lsp-agent update path      {ours_ms * 1000:8.1f} us   ratio {ours_ms / echo_ms:.2f}x (target <= 2x)"
    )


async def measure_first_update(work: Path, env: dict[str, str], prompts: int, cold: int) -> None:
    """Part 2: session/prompt to the first update (the model's first streamed words) and to the answer."""
    one = [[text_block("hi")] for _ in range(prompts)]
    echo_first = statistics.median(
        f for f, _, _ in await drive([sys.executable, str(HERE), "--serve", "echo"], work, env, one)
    )
    command = [sys.executable, "-m", "lsp_agent", "acp"]
    with ScriptedModelServer(SCRIPT * (2 * prompts + 3 + cold)) as server:
        env_model = dict(
            env, LSP_AGENT_MODEL="openai/scripted", LSP_AGENT_API_BASE=server.base_url, LSP_AGENT_API_KEY="b"
        )
        warm = [[text_block("/reindex")], [text_block("hi")]]  # index built, litellm imported
        runs = (await drive(command, work, env_model, warm + one))[len(warm) :]
        # a new process, the first prompt 2 s after session/new (the user typing it)
        colds = [(await drive(command, work, env_model, one[:1], pause=2.0))[0] for _ in range(cold)]
        alone = await run_alone(work, env_model, prompts)
    ours_first, ours_done = (statistics.median(r[i] for r in runs) for i in (0, 1))
    print(f"session/prompt -> first session/update (median of {prompts} prompts, model answers at once):")
    print(f"  echo agent (baseline)      {echo_first:8.1f} ms")
    print(
        f"  lsp-agent acp              {ours_first:8.1f} ms   ratio {ours_first / echo_first:.1f}x (target <= 50 ms)"
        "   (the model's first streamed words)"
    )
    print(
        f"  the same run without ACP   {alone[0]:8.1f} ms   (build_run + run to its first text_delta, in-process)"
    )
    print(f"  ACP's own share            {ours_first - alone[0]:8.1f} ms")
    print(
        f"session/prompt -> prompt answer (the run's end): lsp-agent acp {ours_done:.1f} ms, without ACP {alone[1]:.1f} ms"
    )
    if colds:
        firsts = ", ".join(f"{f:.0f}" for f, _, _ in colds)
        print(f"first prompt of a new process, 2 s after session/new: first update {firsts} ms")


SCRIPT = [
    {
        "content": "Hello! Nothing to change here.",
        "tool_calls": [{"name": "task_complete", "arguments": {"summary": "hello"}}],
    }
]


async def main_async(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="acp-bench-"))
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", XDG_CACHE_HOME=str(work / ".cache"))
    await measure_per_update(work, env, args.updates)
    await measure_first_update(work, env, args.prompts, args.cold)


async def run_alone(root: Path, env: dict[str, str], prompts: int) -> tuple[float, float]:
    """Median ms of the same one-step run without ACP to its first text_delta and to its `done` event."""
    os.environ.update(env)
    from lsp_agent.acp.workspace import IndexPool
    from lsp_agent.assembly import build_run
    from lsp_agent.settings_sources import load_settings

    settings, _ = load_settings(root)
    pool = IndexPool()
    pool.start(root, settings)
    index = await pool.get(root, timeout=120)
    times = []
    for _ in range(prompts + 1):
        started = time.perf_counter()
        marks: dict[str, float] = {}
        run = await build_run(
            "hi", settings, root, sink=first_of_each(marks), asker=None, index=index, stream_text=True
        )
        await run.run()
        times.append(((marks["text_delta"] - started) * 1000, (marks["done"] - started) * 1000))
    rest = times[1:]  # the first pays for litellm's import
    return statistics.median(t[0] for t in rest), statistics.median(t[1] for t in rest)


def first_of_each(marks: dict[str, float]) -> Any:
    """A sink noting when the first event of each kind arrives."""

    def sink(event: Any) -> None:
        marks.setdefault(event.kind, time.perf_counter())

    return sink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--prompts", type=int, default=15)
    parser.add_argument("--cold", type=int, default=2, help="new processes timed for their first prompt")
    parser.add_argument("--serve", choices=("echo", "events"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(run_agent(EchoAgent() if args.serve == "echo" else EventAgent()))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
