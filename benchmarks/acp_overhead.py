"""ACP round-trip overhead of `lsp-agent acp`, against a minimal echo agent on the same SDK, measured in the same run.

Every agent runs as a subprocess on stdio and is driven by the SDK's client side, as an editor would drive it.

1. Per session/update: a prompt that makes the agent send N updates. The baseline is an echo agent (modelled on the
   SDK's examples/echo_agent.py: one agent_message_chunk per prompt block, straight to the connection); ours feeds N
   run events (tool_call / tool_result pairs, as a run emits them) through lsp-agent's real update path
   (TurnTranslator -> UpdatePump -> the connection, with history recording). Reported: ms per update, client side.
2. From session/prompt to the first update: the echo agent's first chunk vs the real `lsp-agent acp` with the
   scripted model answering at once (litellm's HTTP path, the run assembly, the tools, the index already built).

    python benchmarks/acp_overhead.py [--updates 2000] [--prompts 15]

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
        from lsp_agent.agent.events import AgentEvent
        from lsp_agent.agent.session import Session

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
    command: list[str], cwd: Path, env: dict[str, str], prompts: list[list[Any]]
) -> list[tuple[float, float, int]]:
    """(ms to the first update, ms to the response, updates) of each prompt, in one session."""
    client = Recorder()
    out = []
    async with spawn_agent_process(client, command[0], *command[1:], env=env, cwd=cwd) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        await asyncio.sleep(0.5)  # the session's announcements are not part of any prompt
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


async def main_async(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="acp-bench-"))
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", XDG_CACHE_HOME=str(work / ".cache"))
    many = [[text_block(f"line {i} of the output") for i in range(args.updates)] for _ in range(3)]
    echo = await drive([sys.executable, str(HERE), "--serve", "echo"], work, env, many)
    ours = await drive([sys.executable, str(HERE), "--serve", "events"], work, env, many)
    echo_ms, ours_ms = per_update(echo), per_update(ours)
    print(f"per session/update ({args.updates} updates per prompt, median of 3 prompts):")
    print(f"  echo agent (baseline)      {echo_ms * 1000:8.1f} us")
    print(
        f"  lsp-agent update path      {ours_ms * 1000:8.1f} us   ratio {ours_ms / echo_ms:.2f}x (target <= 2x)"
    )

    one = [[text_block("hi")] for _ in range(args.prompts)]
    echo_first = statistics.median(
        f for f, _, _ in await drive([sys.executable, str(HERE), "--serve", "echo"], work, env, one)
    )
    script = [{"content": "", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "hello"}}]}]
    with ScriptedModelServer(script * (args.prompts + 1)) as server:
        env_model = dict(
            env, LSP_AGENT_MODEL="openai/scripted", LSP_AGENT_API_BASE=server.base_url, LSP_AGENT_API_KEY="b"
        )
        command = [sys.executable, "-m", "lsp_agent", "acp"]
        warm = [[text_block("/reindex")], [text_block("hi")]]  # index built, litellm imported
        runs = await drive(command, work, env_model, warm + one)
    with ScriptedModelServer(script * (args.prompts + 1)) as server:
        env_model = dict(env_model, LSP_AGENT_API_BASE=server.base_url)
        alone = await run_alone(work, env_model, args.prompts)
    ours_first = statistics.median(f for f, _, _ in runs[len(warm) :])
    print(
        f"session/prompt -> first session/update (median of {args.prompts} prompts, model answers at once):"
    )
    print(f"  echo agent (baseline)      {echo_first:8.1f} ms")
    print(
        f"  lsp-agent acp              {ours_first:8.1f} ms   ratio {ours_first / echo_first:.1f}x (target <= 50 ms)"
    )
    print(
        f"  the same run without ACP   {alone:8.1f} ms   (build_run + run to its done event, in-process, same index)"
    )
    print(f"  ACP's own share            {ours_first - alone:8.1f} ms")


async def run_alone(root: Path, env: dict[str, str], prompts: int) -> float:
    """Median ms of the same one-step run without ACP: build_run, then run() until its `done` event."""
    os.environ.update(env)
    from lsp_agent.acp.workspace import IndexPool
    from lsp_agent.assembly import build_run
    from lsp_agent.config import load_settings

    settings, _ = load_settings(root)
    pool = IndexPool()
    pool.start(root, settings)
    index = await pool.get(root, timeout=120)
    times = []
    for _ in range(prompts + 1):
        started = time.perf_counter()
        done: list[float] = []
        run = await build_run("hi", settings, root, sink=done_recorder(done), asker=None, index=index)
        await run.run()
        times.append((done[0] - started) * 1000)
    return statistics.median(times[1:])  # the first pays for litellm's import


def done_recorder(done: list[float]) -> Any:
    """A sink noting when the run's `done` event arrives."""

    def sink(event: Any) -> None:
        if event.kind == "done":
            done.append(time.perf_counter())

    return sink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--prompts", type=int, default=15)
    parser.add_argument("--serve", choices=("echo", "events"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(run_agent(EchoAgent() if args.serve == "echo" else EventAgent()))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
