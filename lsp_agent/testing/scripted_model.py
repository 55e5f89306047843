"""A scripted OpenAI-compatible chat server on 127.0.0.1 that tests drive through litellm's real HTTP path.

Script steps are consumed in order, one per POST /v1/chat/completions request:

    {"content": "text", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
     "delay": 0.5, "status": 429, "error": "message", "usage": {"prompt_tokens": 10, "completion_tokens": 5},
     "match": "substring", "drop_stream": true, "finish_reason": "stop"}

"usage": false leaves usage out of the reply (as some providers do). A step with "match" is only used when that substring appears in the request's last user/tool message; such
steps take priority over plain steps. Replies stream as server-sent events when the request asks for it.

Fault steps (for reliability tests):
    "headers": {"Retry-After": "5"}   extra response headers (on errors and replies)
    "body": "not json" | {...}         this exact body (a string as-is, anything else as JSON) with "status"
    "trickle": 2.0                     send the response one byte every 2 seconds
    "endless": true                    a 200 event stream that sends a chunk every 0.2 s and never ends
    "hang_up": true                    close the connection without answering
A reply the client abandons (it closed the connection) is counted in `disconnects`.

POST /v1/embeddings answers every input with a deterministic vector (by default a hashed bag of words, see
`hashed_embedding`; pass `embed=` for another) and records the inputs in `embedding_inputs`; set
`embedding_error = (status, message)` to make it fail instead. Embedding requests consume no script steps.
"""

from __future__ import annotations

import argparse
import base64
import json
import socket
import struct
import sys
import threading
import time
import zlib
from array import array
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_ID = "scripted"
EMBEDDING_DIM = 64


def hashed_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic bag-of-words vector: each lowercase word adds 1 to the bucket its CRC-32 picks."""
    vec = [0.0] * dim
    for word in text.lower().split():
        word = word.strip(".,:;!?()[]{}\"'`")
        if word:
            vec[zlib.crc32(word.encode()) % dim] += 1.0
    return vec


class ScriptedModelServer:
    """An OpenAI-compatible server replying with scripted steps; use as a context manager."""

    def __init__(
        self,
        script: list[dict],
        host: str = "127.0.0.1",
        port: int = 0,
        embed: Callable[[str], list[float]] | None = None,
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
        self.disconnects = 0  # replies cut short because the client went away
        self.headers: list[dict[str, str]] = []  # each chat request's headers (Authorization, ...)
        self.request_times: list[float] = []  # time.monotonic() when each chat request arrived
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server((host, port), _Handler)
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
        last = _last_user_or_tool_text(body.get("messages") or [])
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

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the server is closing."""
        return self._stop.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ScriptedModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that aborts a delayed request is expected; keep test output clean.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _last_user_or_tool_text(messages: list[dict]) -> str:
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") in ("user", "tool"):
            return _text_of(msg.get("content"))
    return ""


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # --- plumbing -------------------------------------------------------------------------------------------

    def _send_json(
        self, status: int, payload: dict, headers: dict[str, str] | None = None, trickle: float = 0.0
    ) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers, trickle)

    def _send_bytes(self, status: int, data: bytes, headers: dict[str, str], trickle: float = 0.0) -> None:
        """A JSON response; with `trickle`, one byte every `trickle` seconds."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not trickle:
            self.wfile.write(data)
            return
        self.close_connection = True
        for i in range(len(data)):
            if not self._write(data[i : i + 1]) or self.server.owner.wait(trickle):
                return

    def _write(self, data: bytes) -> bool:
        """Write and flush; False (and a counted disconnect) when the client has gone away."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            with self.server.owner._lock:
                self.server.owner.disconnects += 1
            self.close_connection = True
            return False
        return True

    def _error(
        self,
        status: int,
        message: str,
        err_type: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> None:
        sent = {"Retry-After": "0"} if status == 429 else {}
        sent.update(headers or {})
        self._send_json(status, {"error": {"message": message, "type": err_type, "code": status}}, sent)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL_ID, "object": "model", "owned_by": "lsp-agent-tests"}],
                },
            )
        else:
            self._error(404, f"no such endpoint: GET {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        endpoint = self.path.rstrip("/")
        if not endpoint.endswith(("/chat/completions", "/embeddings")):
            self._error(
                404, f"no such endpoint: POST {self.path} (only /v1/chat/completions, /v1/embeddings)"
            )
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            self._error(400, f"request body is not valid JSON: {exc}")
            return
        if endpoint.endswith("/embeddings"):
            self._embeddings(body)
            return
        owner = self.server.owner
        index, step = owner.take_step(body, {k.lower(): v for k, v in self.headers.items()})
        if step is None:
            last = _last_user_or_tool_text(body.get("messages") or [])[:200]
            self._error(
                500,
                f"scripted model: script exhausted ({len(owner.script)} steps, request "
                f"#{len(owner.requests)} has no step left); last user/tool message: {last!r}",
                "script_exhausted",
            )
            return
        delay = float(step.get("delay") or 0)
        if delay and owner.wait(delay):
            return
        if not self._fault(step):
            self._reply(body, step, index)

    def _reply(self, body: dict, step: dict, index: int) -> None:
        """A scripted error, or the completion (streamed when asked), trickled if the step says so."""
        status = int(step.get("status") or 200)
        headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
        if status != 200:
            self._error(
                status,
                str(step.get("error") or f"scripted error {status} (step {index})"),
                "rate_limit_error" if status == 429 else "api_error",
                headers,
            )
        elif body.get("stream") and not step.get("trickle"):
            self._stream(body, step, index)
        else:
            self._send_json(200, _completion(body, step, index), headers, float(step.get("trickle") or 0))

    def _fault(self, step: dict) -> bool:
        """Answer a fault step (hang-up, raw body, endless stream); False when the step is a normal one."""
        if step.get("hang_up"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return True
        if "body" in step:
            raw = step["body"]
            data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else json.dumps(raw).encode()
            headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
            self._send_bytes(int(step.get("status") or 200), data, headers, float(step.get("trickle") or 0))
            return True
        if step.get("endless"):
            self._endless()
            return True
        return False

    def _endless(self) -> None:
        """A stream that never finishes: one content chunk every 0.2 s until the client or the server leaves."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunk = {"id": "chatcmpl-endless", "object": "chat.completion.chunk", "created": int(time.time())}
        chunk["model"] = MODEL_ID
        chunk["choices"] = [{"index": 0, "delta": {"content": "."}, "finish_reason": None}]
        line = f"data: {json.dumps(chunk)}\n\n".encode()
        while not self.server.owner.wait(0.2):
            if not self._write(line):
                return

    def _embeddings(self, body: dict) -> None:
        owner = self.server.owner
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            self._error(400, "input must be a string or a list of strings")
            return
        with owner._lock:
            owner.embedding_inputs.extend(inputs)
            error = owner.embedding_error
        if error is not None:
            self._error(error[0], error[1], "api_error")
            return
        data = []
        for i, text in enumerate(inputs):
            vec: list[float] | str = [float(x) for x in owner.embed(text)]
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(array("f", vec).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        tokens = sum(_estimate_tokens(t) for t in inputs)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or MODEL_ID,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _stream(self, body: dict, step: dict, index: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunks = list(_stream_chunks(body, step, index))
        if step.get("drop_stream"):
            chunks = chunks[: max(1, len(chunks) // 2)]
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        if step.get("drop_stream"):
            # An abrupt reset, like a proxy or provider dropping the connection mid-reply.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _tool_calls(step: dict, index: int) -> list[dict]:
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        args = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{index}_{i}",
                "type": "function",
                "function": {
                    "name": call.get("name", ""),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    return calls


def _usage(body: dict, step: dict) -> dict:
    if step.get("usage"):
        usage = dict(step["usage"])
    else:
        prompt = sum(
            _estimate_tokens(_text_of(m.get("content")))
            for m in body.get("messages") or []
            if isinstance(m, dict)
        )
        completion = _estimate_tokens(
            str(step.get("content") or "") + json.dumps(step.get("tool_calls") or [])
        )
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage.setdefault("prompt_tokens", 0)
    usage.setdefault("completion_tokens", 0)
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage


def _finish_reason(step: dict) -> str:
    return step.get("finish_reason") or ("tool_calls" if step.get("tool_calls") else "stop")


def _completion(body: dict, step: dict, index: int) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
    calls = _tool_calls(step, index)
    if calls:
        message["tool_calls"] = calls
    reply = {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(step)}],
        "usage": _usage(body, step),
    }
    if step.get("usage") is False:
        del reply["usage"]
    return reply


def _stream_chunks(body: dict, step: dict, index: int) -> Iterable[dict]:
    base = {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_ID,
    }

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    content = str(step.get("content") or "")
    for start in range(0, len(content), 16):
        yield chunk({"content": content[start : start + 16]})
    for i, call in enumerate(_tool_calls(step, index)):
        args = call["function"]["arguments"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        for start in range(0, len(args), 32):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args[start : start + 32]}}]})
    yield chunk({}, _finish_reason(step))
    if (body.get("stream_options") or {}).get("include_usage") and step.get("usage") is not False:
        yield {**base, "choices": [], "usage": _usage(body, step)}


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
