"""Tokens and seconds per model reply, bounded (maxTokens + stop after the first action) against unbounded.

A recorded real request (a transcript's request, whole) is sent to a real OpenAI-compatible model server, streamed,
once as lsp-agent sends it now (max_tokens, and in prompt mode the stop sequences `</ACTION>`, `&lt;/ACTION&gt;`)
and once as it was sent before (neither), alternating, `--repeat` times each. Baseline: the unbounded request,
measured in the same run against the same server.

    python benchmarks/bounded_replies.py TRANSCRIPT [--request 1] [--repeat 2]
        [--model openai/local] [--api-base http://127.0.0.1:8765/v1] [--no-stream]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.agent.model.client import ModelClient, get_litellm  # noqa: E402
from lsp_agent.agent.model.parsing import parse_reply  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402
from lsp_agent.replay.recording import load_recording  # noqa: E402
from lsp_agent.tools.registry import default_registry  # noqa: E402


@dataclass
class Sample:
    """One streamed reply: seconds from sending to the end, seconds from its first token to the end, tokens."""

    seconds: float
    generating: float
    tokens: int
    finish: str
    text: str


async def whole_reply(litellm: Any, params: dict[str, Any]) -> Sample:
    """One reply, not streamed (a shared llama-cpp-python server does not interrupt it); seconds include any wait
    for other clients' requests, so "generating" is not known."""
    started = time.perf_counter()
    response = await litellm.acompletion(
        **{k: v for k, v in params.items() if k not in ("stream", "stream_options")}
    )
    seconds = time.perf_counter() - started
    choice = response.choices[0]
    tokens = int(getattr(response.usage, "completion_tokens", 0) or 0)
    return Sample(seconds, float("nan"), tokens, choice.finish_reason or "", choice.message.content or "")


async def one_reply(litellm: Any, params: dict[str, Any]) -> Sample | None:
    """One streamed reply; None when the server ended it early (llama-cpp-python's interrupt_requests ends a
    stream with [DONE] and no finish reason when another client's request is waiting)."""
    started = time.perf_counter()
    stream = await litellm.acompletion(**params)
    text: list[str] = []
    tokens, finish, first = 0, "", 0.0
    try:
        async for chunk in stream:
            if getattr(chunk, "usage", None):
                tokens = int(chunk.usage.completion_tokens or 0)
            for choice in chunk.choices or []:
                if choice.delta.content and not first:
                    first = time.perf_counter()
                text.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
    finally:
        await stream.aclose()
    ended = time.perf_counter()
    if getattr(stream, "received_finish_reason", "") is None or not finish:
        return None
    content = "".join(text)
    if not tokens:
        tokens = int(litellm.token_counter(model="gpt-4o", text=content))
    return Sample(ended - started, ended - (first or ended), tokens, finish, content)


async def sample(litellm: Any, params: dict[str, Any], attempts: int = 5) -> Sample:
    """A reply the server finished (interrupted ones are sent again)."""
    if not params.get("stream"):
        return await whole_reply(litellm, params)
    for _ in range(attempts):
        result = await one_reply(litellm, params)
        if result is not None:
            return result
        print("  (interrupted by another client's request; sending it again)")
    raise SystemExit(f"the model server interrupted the reply {attempts} times; try when it is less busy")


async def main() -> None:
    """Measure and print both variants and their ratio."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("transcript", type=Path)
    parser.add_argument("--request", type=int, default=1, help="which request of the run (1 = the first)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--model", default="openai/local")
    parser.add_argument("--api-base", default="http://127.0.0.1:8765/v1")
    parser.add_argument(
        "--no-stream",
        action="store_true",
        help="whole replies (for a server other clients share: not interrupted)",
    )
    args = parser.parse_args()
    litellm = await asyncio.to_thread(get_litellm)
    recording = load_recording(args.transcript)
    messages = recording.requests[args.request - 1].messages
    settings = Settings(model=args.model, api_base=args.api_base, tool_calling="prompt", request_timeout=900)
    client = ModelClient(settings, stream=not args.no_stream)
    bounded = client.request_params(messages, default_registry().schemas())
    unbounded = {k: v for k, v in bounded.items() if k not in ("max_tokens", "stop")}
    print(
        f"request {args.request} of {args.transcript}: {len(messages)} messages, {args.model} at {args.api_base}"
    )
    print(f"bounded: max_tokens {bounded['max_tokens']}, stop {bounded.get('stop')}")
    results: dict[str, list[Sample]] = {"unbounded": [], "bounded": []}
    for _ in range(args.repeat):
        for name, params in (("unbounded", unbounded), ("bounded", bounded)):
            result = await sample(litellm, params)
            results[name].append(result)
            calls = parse_reply(result.text).calls
            action = f"{calls[0].name}({calls[0].arguments})" if calls else "no action"
            print(
                f"  {name:9s} {result.seconds:6.1f} s ({result.generating:5.1f} s generating) "
                f"{result.tokens:4d} tokens  finish {result.finish:6s}  {action[:60]}"
            )
    for name, runs in results.items():
        seconds = statistics.median(r.seconds for r in runs)
        generating = statistics.median(r.generating for r in runs)
        tokens = statistics.median(r.tokens for r in runs)
        label = "unbounded (baseline)" if name == "unbounded" else "bounded"
        print(
            f"median {label:20s}: {seconds:6.1f} s per reply ({generating:.1f} s generating), {tokens:.0f} tokens"
        )
    base, now = results["unbounded"], results["bounded"]
    ratio_s = statistics.median(r.seconds for r in now) / statistics.median(r.seconds for r in base)
    ratio_g = statistics.median(r.generating for r in now) / max(
        statistics.median(r.generating for r in base), 1e-9
    )
    ratio_t = statistics.median(r.tokens for r in now) / max(statistics.median(r.tokens for r in base), 1)
    print(f"bounded / unbounded: {ratio_s:.2f}x seconds, {ratio_g:.2f}x generating, {ratio_t:.2f}x tokens")


if __name__ == "__main__":
    asyncio.run(main())
