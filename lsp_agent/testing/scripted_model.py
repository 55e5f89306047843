"""A scripted OpenAI-compatible chat server on 127.0.0.1 that tests drive through litellm's real HTTP path.

Script steps are consumed in order, one per POST /v1/chat/completions request:

    {"content": "text", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
     "delay": 0.5, "status": 429, "error": "message", "usage": {"prompt_tokens": 10, "completion_tokens": 5},
     "match": "substring", "drop_stream": true, "finish_reason": "stop"}

"usage": false leaves usage out of the reply (as some providers do). "refusal": "text" sends OpenAI's refusal field
(with "finish_reason": "content_filter", a provider's content filter stopping the reply). A step with "match" is only used when that substring appears in the request's last user/tool message; such
steps take priority over plain steps. Replies stream as server-sent events when the request asks for it.
Text completions (/v1/completions, "match" looks in the prompt) stream too, as text_completion events of eight
characters, with llama.cpp's "timings" on the last one when the step has them (e.g. {"prompt_n": 12}). A path ending
in /fim/completions streams chat-style deltas instead, as Mistral's FIM endpoint (Codestral) does.

Fault steps (for reliability tests):
    "headers": {"Retry-After": "5"}   extra response headers (on errors and replies)
    "body": "not json" | {...}         this exact body (a string as-is, anything else as JSON) with "status"
    "trickle": 2.0                     send the response one byte every 2 seconds
    "endless": true                    a 200 event stream that sends a chunk every 0.2 s and never ends
    "hang_up": true                    close the connection without answering
    "chunk_delay": 0.2                 stream the reply one chunk every 0.2 s (a slow model generating)
A text completion sent with a GBNF `grammar` (llama.cpp's field) is answered as `grammar=` says: "follow" (the
default) answers, for a grammar of quoted alternatives (`root ::= "a" | "b"`), the one most like the step's content
(a model constrained to the grammar), and other grammars with the step as scripted; "reject" answers 400 without
using a step (as OpenAI answers a field it does not know); "ignore" answers the step as scripted (a server that
drops the field).
A reply the client abandons (it closed the connection) is counted in `disconnects`; each streamed reply is recorded
in `streams` as (chunks sent, chunks in the reply), so a test sees where the server stopped generating.

Requests are answered as OpenAI-compatible servers do: the content ends before the first of the request's `stop`
strings (finish reason "stop"), else after `max_tokens` tokens of four characters (finish reason "length").

A text completion sent with `echo` scores its prompt and consumes no step: the prompt comes back with one token and
`logprobs` as `prompt_scores` says (e.g. {"return hi": -0.1}: the tokens of the last place that text takes in the
prompt get -0.1, the others -2.0; a function of the prompt returns the field itself; None: `logprobs` null, as a
server without prompt log-probabilities answers); such requests are recorded in `scored`.

POST /v1/embeddings answers every input with a deterministic vector (by default a hashed bag of words, see
`hashed_embedding`; pass `embed=` for another) and records the inputs in `embedding_inputs`; set
`embedding_error = (status, message)` to make it fail instead. Embedding requests consume no script steps.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lsp_agent.testing.scripted_http import ScriptedHandler, ScriptedHTTPServer
from lsp_agent.testing.scripted_replies import (
    EMBEDDING_DIM,
    MODEL_ID,
    hashed_embedding,
    last_user_or_tool_text,
    prompt_logprobs,
)

__all__ = ["EMBEDDING_DIM", "MODEL_ID", "ScriptedModelServer", "hashed_embedding", "load_script", "main"]


class ScriptedModelServer:
    """An OpenAI-compatible server replying with scripted steps; use as a context manager."""

    def __init__(
        self,
        script: list[dict],
        host: str = "127.0.0.1",
        port: int = 0,
        embed: Callable[[str], list[float]] | None = None,
        prompt_scores: dict[str, float] | Callable[[str], Any] | None = None,
        grammar: str = "follow",
    ) -> None:
        for i, step in enumerate(script):
            if not isinstance(step, dict):
                raise ValueError(f"script step {i} must be an object, got {type(step).__name__}")
        self.script = list(script)
        self.used: list[bool] = [False] * len(self.script)
        self.requests: list[dict] = []
        self.embed = embed or hashed_embedding
        self.embedding_inputs: list[str] = []
        self.embedding_error: tuple[int, str] | None = None
        self.prompt_scores = prompt_scores  # how prompts sent with `echo` are scored (None: no logprobs)
        self.scored: list[dict] = []  # those requests
        self.grammar = grammar  # how requests with a `grammar` are answered: follow, reject, ignore
        self.disconnects = 0  # replies cut short because the client went away
        self.headers: list[dict[str, str]] = []  # each chat request's headers (Authorization, ...)
        self.request_times: list[float] = []  # time.monotonic() when each chat request arrived
        self.streams: list[tuple[int, int]] = []  # each streamed reply: (chunks sent, chunks in the reply)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ScriptedHTTPServer((host, port), ScriptedHandler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ending in /v1."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedModelServer:
        """Serve in a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="scripted-model",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and wake up any delayed replies."""
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self, steps: Iterable[dict]) -> None:
        """Replace the whole script (and forget the requests) between independent runs on one server."""
        with self._lock:
            self.script = list(steps)
            self.used = [False] * len(self.script)
            self.requests.clear()
            self.headers.clear()
            self.request_times.clear()

    def add_steps(self, steps: Iterable[dict]) -> None:
        """Append steps to the script while serving."""
        with self._lock:
            for step in steps:
                self.script.append(step)
                self.used.append(False)

    @property
    def remaining(self) -> int:
        """How many steps have not been consumed yet."""
        with self._lock:
            return self.used.count(False)

    def take_step(self, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict | None]:
        """Record the request and consume the step that answers it: (index, step) or (-1, None) if exhausted."""
        last = last_user_or_tool_text(body.get("messages") or []) or str(body.get("prompt") or "")
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(headers or {}))
            self.request_times.append(time.monotonic())
            chosen = -1
            for i, step in enumerate(self.script):
                if not self.used[i] and step.get("match") is not None and str(step["match"]) in last:
                    chosen = i
                    break
            if chosen < 0:
                for i, step in enumerate(self.script):
                    if not self.used[i] and step.get("match") is None:
                        chosen = i
                        break
            if chosen < 0:
                return -1, None
            self.used[chosen] = True
            return chosen, self.script[chosen]

    def within_grammar(self, body: dict, step: dict) -> dict:
        """The step as a model constrained to the request's grammar answers it (see the module's docstring)."""
        grammar = body.get("grammar")
        if (
            not isinstance(grammar, str)
            or self.grammar != "follow"
            or not isinstance(step.get("content"), str)
        ):
            return step
        rule = grammar.split("::=", 1)[-1]
        allowed = [json.loads(s) for s in re.findall(r'"(?:\\.|[^"\\])*"', rule)]
        if not allowed:
            return step
        content = step["content"]
        chosen = max(allowed, key=lambda a: (a == content, difflib.SequenceMatcher(None, a, content).ratio()))
        return {**step, "content": chosen}

    def score(self, body: dict) -> Any:
        """Record a request that scores its prompt and give the `logprobs` it is answered with: by `prompt_scores`
        (scored texts, see prompt_logprobs; a function of the prompt gives the field as sent), else none."""
        with self._lock:
            self.scored.append(body)
        prompt = str(body.get("prompt") or "")
        if callable(self.prompt_scores):
            return self.prompt_scores(prompt)
        return None if self.prompt_scores is None else prompt_logprobs(prompt, self.prompt_scores)

    def record_stream(self, sent: int, total: int) -> None:
        """Note how much of a streamed reply went out."""
        with self._lock:
            self.streams.append((sent, total))

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the server is closing."""
        return self._stop.wait(seconds)


def load_script(path: Path) -> list[dict]:
    """Read a script file: a JSON list of steps, or an object with a "steps" list."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("steps")
    if not isinstance(data, list):
        raise ValueError(f'{path}: expected a JSON list of steps (or {{"steps": [...]}})')
    return data


def main(argv: list[str] | None = None) -> int:
    """Serve a script file until killed; the base URL is the first line on stdout."""
    parser = argparse.ArgumentParser(
        prog="python -m lsp_agent.testing.scripted_model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--script", required=True, help="JSON file with the list of steps")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    args = parser.parse_args(argv)
    try:
        script = load_script(Path(args.script))
        server = ScriptedModelServer(script, port=args.port)
    except (OSError, ValueError) as exc:
        print(f"scripted_model: {exc}", file=sys.stderr)
        return 2
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
