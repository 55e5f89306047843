"""Tokens and seconds per model reply, bounded (maxTokens + stop after the first action) against unbounded.

A recorded real request (a transcript's request, whole) is sent to a real OpenAI-compatible model server, streamed,
once as lsp-agent sends it now (max_tokens, and in prompt mode the stop sequences `</ACTION>`, `&lt;/ACTION&gt;`)
and once as it was sent before (neither), alternating, `--repeat` times each. Baseline: the unbounded request,
measured in the same run against the same server.

    python benchmarks/bounded_replies.py TRANSCRIPT [--request 1] [--repeat 2]
        [--model openai/local] [--api-base http://127.0.0.1:8765/v1]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_agent.agent.model import ModelClient, get_litellm  # noqa: E402
from lsp_agent.agent.parsing import parse_reply  # noqa: E402
from lsp_agent.agent.recording import load_recording  # noqa: E402
from lsp_agent.config import Settings  # noqa: E402
from lsp_agent.tools.registry import default_registry  # noqa: E402


async def one_reply(litellm: Any, params: dict[str, Any]) -> tuple[float, int, str, str]:
    """(seconds, completion tokens, finish reason, text) of one streamed reply."""
    started = time.perf_counter()
    stream = await litellm.acompletion(**params)
    text, tokens, finish = [], 0, ""
    try:
        async for chunk in stream:
            if getattr(chunk, "usage", None):
                tokens = int(chunk.usage.completion_tokens or 0)
            for choice in chunk.choices or []:
                text.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
    finally:
        await stream.aclose()
    content = "".join(text)
    if not tokens:
        tokens = int(litellm.token_counter(model="gpt-4o", text=content))
    return time.perf_counter() - started, tokens, finish, content


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
    args = parser.parse_args()
    litellm = await asyncio.to_thread(get_litellm)
    recording = load_recording(args.transcript)
    messages = recording.requests[args.request - 1].messages
    settings = Settings(model=args.model, api_base=args.api_base, tool_calling="prompt", request_timeout=900)
    client = ModelClient(settings, stream=True)
    bounded = client.request_params(messages, default_registry().schemas())
    unbounded = {k: v for k, v in bounded.items() if k not in ("max_tokens", "stop")}
    print(
        f"request {args.request} of {args.transcript}: {len(messages)} messages, {args.model} at {args.api_base}"
    )
    print(f"bounded: max_tokens {bounded['max_tokens']}, stop {bounded.get('stop')}")
    results: dict[str, list[tuple[float, int, str, str]]] = {"unbounded": [], "bounded": []}
    for _ in range(args.repeat):
        for name, params in (("unbounded", unbounded), ("bounded", bounded)):
            result = await one_reply(litellm, params)
            results[name].append(result)
            calls = parse_reply(result[3]).calls
            action = f"{calls[0].name}({calls[0].arguments})" if calls else "no action"
            print(
                f"  {name:9s} {result[0]:6.1f} s  {result[1]:4d} tokens  finish {result[2]:6s}  {action[:70]}"
            )
    medians = {
        name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        for name, runs in results.items()
    }
    (sec_u, tok_u), (sec_b, tok_b) = medians["unbounded"], medians["bounded"]
    print(f"median unbounded (baseline): {sec_u:.1f} s, {tok_u:.0f} tokens per reply")
    print(f"median bounded:              {sec_b:.1f} s, {tok_b:.0f} tokens per reply")
    print(f"bounded / unbounded: {sec_b / sec_u:.2f}x seconds, {tok_b / max(tok_u, 1):.2f}x tokens")


if __name__ == "__main__":
    asyncio.run(main())
