"""The scripted model's HTTP side: routes requests to the script, streams replies, plays fault steps."""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import time
from array import array
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from lsp_agent.testing.scripted_replies import (
    MODEL_ID,
    apply_request_limits,
    completion,
    echo_completion,
    estimate_tokens,
    last_user_or_tool_text,
    stream_chunks,
    text_completion,
    text_stream_chunks,
)

if TYPE_CHECKING:
    from lsp_agent.testing.scripted_model import ScriptedModelServer


class ScriptedHTTPServer(ThreadingHTTPServer):
    """The HTTP server of a ScriptedModelServer (its `owner`)."""

    daemon_threads = True
    allow_reuse_address = True
    owner: ScriptedModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that aborts a delayed request is expected; keep test output clean.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class ScriptedHandler(BaseHTTPRequestHandler):
    """Answers one HTTP request from the owner's script: chat completions, embeddings, /models, faults."""

    protocol_version = "HTTP/1.1"
    server: ScriptedHTTPServer

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
        if not endpoint.endswith(("/completions", "/embeddings")):
            self._error(
                404,
                f"no such endpoint: POST {self.path} (only /v1/chat/completions, /v1/completions, /v1/embeddings)",
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
        if (
            body.get("grammar") is not None and owner.grammar == "reject"
        ):  # as OpenAI answers an unknown field
            with owner._lock:
                owner.requests.append(body)
            self._error(400, "Unrecognized request argument supplied: grammar")
            return
        if "prompt" in body and body.get("echo"):  # scoring its prompt: no step consumed
            self._send_json(200, echo_completion(body, owner.score(body), len(owner.scored)))
            return
        index, step = owner.take_step(body, {k.lower(): v for k, v in self.headers.items()})
        if step is None:
            last = last_user_or_tool_text(body.get("messages") or [])[:200]
            self._error(
                500,
                f"scripted model: script exhausted ({len(owner.script)} steps, request "
                f"#{len(owner.requests)} has no step left); last user/tool message: {last!r}",
                "script_exhausted",
            )
            return
        step = owner.within_grammar(body, step)
        delay = float(step.get("delay") or 0)
        if delay and owner.wait(delay):
            return
        if not self._fault(step):
            self._reply(body, step, index)

    def _reply(self, body: dict, step: dict, index: int) -> None:
        """A scripted error, or the completion (streamed when asked), trickled if the step says so."""
        step = apply_request_limits(body, step)
        status = int(step.get("status") or 200)
        headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
        if status != 200:
            self._error(
                status,
                str(step.get("error") or f"scripted error {status} (step {index})"),
                "rate_limit_error" if status == 429 else "api_error",
                headers,
            )
        elif "prompt" in body and body.get("stream") and not step.get("trickle"):
            # Mistral's FIM endpoint (Codestral) streams chat-style deltas; /v1/completions streams text
            fim = self.path.rstrip("/").endswith("/fim/completions")
            self._stream(body, step, index, stream_chunks if fim else text_stream_chunks)
        elif "prompt" in body:  # a text completion (/v1/completions) not streamed
            self._send_json(200, text_completion(body, step, index), headers, float(step.get("trickle") or 0))
        elif body.get("stream") and not step.get("trickle"):
            self._stream(body, step, index)
        else:
            self._send_json(200, completion(body, step, index), headers, float(step.get("trickle") or 0))

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
        tokens = sum(estimate_tokens(t) for t in inputs)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or MODEL_ID,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _stream(self, body: dict, step: dict, index: int, make_chunks: Any = stream_chunks) -> None:
        """Server-sent events, `chunk_delay` seconds apart; a client that leaves stops the stream (recorded)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunks = list(make_chunks(body, step, index))
        if step.get("drop_stream"):
            chunks = chunks[: max(1, len(chunks) // 2)]
        delay = float(step.get("chunk_delay") or 0)
        sent = 0
        for chunk in chunks:
            if (delay and sent and self.server.owner.wait(delay)) or not self._write(
                f"data: {json.dumps(chunk)}\n\n".encode()
            ):
                break
            sent += 1
        self.server.owner.record_stream(sent, len(chunks))
        if sent < len(chunks):
            return
        if step.get("drop_stream"):
            # An abrupt reset, like a proxy or provider dropping the connection mid-reply.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        try:  # the reply is complete: a client that leaves before [DONE] is no disconnect
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True
