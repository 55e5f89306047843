"""`lsp-agent acp --listen HOST:PORT`: the agent over WebSocket and Streamable HTTP, for an editor on another machine.

One uvicorn server on HOST:PORT serves the endpoint `/acp`:

    ws://HOST:PORT/acp     WebSocket: one JSON-RPC message a text frame, checked like stdio lines (acp/wire.py),
                           one agent a connection (the SDK's AgentSideConnection over SocketTransport)
    http://HOST:PORT/acp   Streamable HTTP (POST + SSE), the SDK's own server (acp.http); each POST body is
                           checked first and a bad one refused with 400 and the JSON-RPC error; a client whose
                           event streams all closed has its prompts cancelled (acp/remote_http.py)

Every request, both kinds, must carry `Authorization: Bearer TOKEN` when a token is in force (any address that is
not loopback, or --require-token); the comparison takes constant time and the token is never logged. A request
with an `Origin` header (a web page in a browser: WebSockets are not held back by CORS) is refused, so a page
cannot drive an agent that listens on loopback without a token.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import json
import logging
import os
import secrets
import sys
from dataclasses import dataclass
from typing import Any

from lsp_agent.acp.main import make_agent, run_loop, serve_connection
from lsp_agent.acp.wire import MAX_MESSAGE_BYTES, check_message

log = logging.getLogger(__name__)

ENDPOINT = "/acp"
TOKEN_ENV = "LSP_AGENT_ACP_TOKEN"


@dataclass(frozen=True)
class ListenAddress:
    """Where to listen: a host (name or address) and a port (0: any free one)."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # another name: it may resolve to anything


def parse_listen(text: str) -> ListenAddress:
    """HOST:PORT, [IPV6]:PORT or PORT (loopback); ValueError says what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(
            f"--listen {text}: give HOST:PORT (e.g. 127.0.0.1:8765, or 0.0.0.0:8765 with a token)"
        )
    return ListenAddress(host, int(port))


def bearer_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, if any."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def refusal(scope: dict[str, Any], token: str | None) -> tuple[int, str] | None:
    """(HTTP status, reason) when this connection may not talk to the agent; None when it may."""
    if scope.get("path") != ENDPOINT:
        return 404, f"the ACP endpoint is {ENDPOINT}"
    headers = scope.get("headers") or []
    if any(name.lower() == b"origin" for name, _ in headers):
        return 403, "requests from web pages (with an Origin header) may not drive the agent"
    if token is None:
        return None
    given = bearer_token(headers)
    if given is None or not hmac.compare_digest(given.encode(), token.encode()):
        return (
            401,
            "a bearer token is required: send 'Authorization: Bearer TOKEN' (the token the agent printed)",
        )
    return None


class SocketTransport:
    """An acp Transport over an ASGI WebSocket: one message a frame; bad frames are answered here, not passed on."""

    def __init__(self, receive: Any, send: Any) -> None:
        self._receive = receive
        self._send = send
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message as a text frame."""
        if self._closed:
            raise ConnectionError("the WebSocket is closed")
        async with self._lock:
            await self._send({"type": "websocket.send", "text": json.dumps(message, separators=(",", ":"))})

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message (None once the client disconnects)."""
        while True:
            event = await self._receive()
            if event["type"] == "websocket.disconnect":
                self._closed = True
                return None
            if event["type"] != "websocket.receive":
                continue
            data = event.get("text") if event.get("text") is not None else event.get("bytes") or b""
            message, replies = check_message(data)
            for reply in replies:
                log.warning("refused a client frame: %s", reply["error"]["message"])
                await self.send(reply)
            if message is not None:
                return message

    async def close(self) -> None:
        """No more sends (the socket closes when the connection's handler returns)."""
        self._closed = True


class RemoteApp:
    """The ASGI application: checks every connection, then WebSocket to our bridge, HTTP to the SDK's server."""

    def __init__(self, flags: dict, token: str | None) -> None:
        from lsp_agent.acp.remote_http import WatchedHttp

        self.flags = flags
        self.token = token
        self.http = WatchedHttp(flags)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            try:
                await self.http.app(scope, receive, send)
            finally:
                await self.http.close()
            return
        if scope["type"] not in ("http", "websocket"):
            return
        refused = refusal(scope, self.token)
        if refused is not None:
            client = (scope.get("client") or ("?",))[0]
            log.warning("refused a %s connection from %s: %s", scope["type"], client, refused[1])
            await (_deny_socket if scope["type"] == "websocket" else _deny_http)(
                scope, receive, send, *refused
            )
        elif scope["type"] == "websocket":
            await self.serve_socket(receive, send)
        elif scope.get("method") == "POST":
            await self.checked_post(scope, receive, send)
        elif scope.get("method") == "GET":
            await self.http.stream(scope, receive, send)
        elif scope.get("method") == "DELETE":
            await self.http.delete(scope, receive, send)
        else:
            await self.http.app(scope, receive, send)

    async def serve_socket(self, receive: Any, send: Any) -> None:
        """One WebSocket client: its own agent until it disconnects (its runs and MCP servers then stop)."""
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await serve_connection(make_agent(self.flags), SocketTransport(receive, send))

    async def checked_post(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """A Streamable HTTP POST: its body checked like a stdio line, then handed to the SDK's server."""
        body = await _read_body(receive)
        message, replies = check_message(body)
        if message is None:
            await _respond(send, 400, replies[0] if len(replies) == 1 else replies)
            return
        data = json.dumps(message).encode()
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await self.http.post(scope, replay, send, message)


async def _read_body(receive: Any) -> bytes:
    """The whole body of an HTTP request (up to MAX_MESSAGE_BYTES; more is cut and fails to parse)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] != "http.request":
            break
        chunk = event.get("body", b"")
        size += len(chunk)
        if size <= MAX_MESSAGE_BYTES:
            chunks.append(chunk)
        if not event.get("more_body"):
            break
    return b"".join(chunks)


async def _respond(
    send: Any, status: int, body: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A JSON HTTP response."""
    data = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head + (headers or [])})
    await send({"type": "http.response.body", "body": data})


def _challenge(status: int) -> list[tuple[bytes, bytes]]:
    """The WWW-Authenticate header of a 401."""
    return [(b"www-authenticate", b'Bearer realm="lsp-agent"')] if status == 401 else []


async def _deny_http(scope: dict[str, Any], receive: Any, send: Any, status: int, reason: str) -> None:
    """Refuse an HTTP request with a status and a JSON reason."""
    await _respond(send, status, {"error": reason}, _challenge(status))


async def _deny_socket(scope: dict[str, Any], receive: Any, send: Any, status: int, reason: str) -> None:
    """Refuse a WebSocket handshake with an HTTP status and reason (a bare close where the server cannot)."""
    await receive()  # websocket.connect
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    data = json.dumps({"error": reason}).encode()
    head = [(b"content-type", b"application/json")] + _challenge(status)
    await send({"type": "websocket.http.response.start", "status": status, "headers": head})
    await send({"type": "websocket.http.response.body", "body": data})


def token_for(address: ListenAddress, args: argparse.Namespace) -> str | None:
    """The token in force: --token or LSP_AGENT_ACP_TOKEN if given; one generated (and printed once) where a
    token is required and none was given; None on loopback without --require-token."""
    token = getattr(args, "token", None) or os.environ.get(TOKEN_ENV) or None
    if token is not None or (address.loopback and not getattr(args, "require_token", False)):
        return token
    token = secrets.token_urlsafe(32)
    print(
        f"lsp-agent acp: clients must send 'Authorization: Bearer {token}' (a new token each start; "
        f"set {TOKEN_ENV} to keep one)",
        file=sys.stderr,
        flush=True,
    )
    return token


def serve_remote(args: argparse.Namespace, flags: dict) -> int:
    """Serve WebSocket and Streamable HTTP clients on --listen until interrupted; the exit code."""
    try:
        address = parse_listen(args.listen)
        import uvicorn  # the mcp package's dependency: always installed
        import websockets  # noqa: F401 - uvicorn's WebSocket support needs it
    except (ValueError, ImportError) as exc:
        hint = (
            " (install the remote extra: pip install 'lsp-agent[remote]')"
            if isinstance(exc, ImportError)
            else ""
        )
        print(f"lsp-agent acp: {exc}{hint}", file=sys.stderr)
        return 2
    token = token_for(address, args)
    config = uvicorn.Config(
        RemoteApp(flags, token),
        host=address.host,
        port=address.port,
        log_level="warning",
        access_log=False,  # a URL could carry a secret; the refusals are logged without one
        ws_max_size=MAX_MESSAGE_BYTES,
        lifespan="on",
    )
    server = uvicorn.Server(config)

    async def run() -> None:
        serving = asyncio.ensure_future(server.serve())
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        if server.started:
            _announce(server, token)
        await serving

    code = run_loop(run())
    return code if server.started else 1


def _announce(server: Any, token: str | None) -> None:
    """Say on stderr where the agent listens (port 0 picked a free one) and whether a token is required."""
    auth = "a bearer token required" if token else "no token (loopback)"
    for bound in server.servers[0].sockets if server.servers else []:
        where = _address(bound.getsockname())
        urls = f"ws://{where}{ENDPOINT} and http://{where}{ENDPOINT}"
        print(f"lsp-agent acp: listening on {urls}, {auth}", file=sys.stderr, flush=True)


def _address(sockname: tuple) -> str:
    """HOST:PORT of a bound socket ([HOST]:PORT for IPv6)."""
    host, port = sockname[0], sockname[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
