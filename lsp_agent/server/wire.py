"""JSON-RPC hardening of pygls: every request gets a result or an error, bad input never stops the server.

pygls 2.1 drops many malformed messages without a word (a bad `jsonrpc` or `method`, a batch array, params it
cannot structure) and its reader allocates whatever Content-Length announces. AgentProtocol checks each message
against JSON-RPC 2.0 and the LSP lifecycle before pygls dispatches it:

    not JSON                               -32700 ParseError (id null)
    not an object, bad jsonrpc/method/id   -32600 InvalidRequest (the request's id when it has a usable one)
    a batch array (LSP has no batches)     -32600 for each request in it (one error with id null if none)
    params that do not fit the method      -32602 InvalidParams, naming the offending field
    unknown method                         -32601 MethodNotFound (pygls)
    a request before initialize            -32002 ServerNotInitialized; notifications are dropped (exit is not)
    a second initialize                    -32600 "server already initialized" (the first session is kept)
    a request after shutdown               -32600 InvalidRequest

Notifications are never answered: their problems are logged. The transport (stdio through the event loop's own
pipe reader, or TCP) feeds the bytes through framing.MessageFramer.
"""

from __future__ import annotations

import contextvars
import json
import logging
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace

from lsp_agent.server.documents import LineWorkspace
from lsp_agent.server.framing import FramingError

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


class RequestError(Exception):
    """A request to refuse with a JSON-RPC error (code, message)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _usable_id(value: Any) -> bool:
    """LSP request ids are integers or strings (bool is no integer here)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def message_kind(message: dict[str, Any]) -> str:
    """The kind of a message: "request", "notification" or "response" (an object with an id and neither a method
    nor a result is a request missing its method: it gets an answer)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "result" in message or "error" in message:
        return "response"
    return "request"


def envelope_problem(message: dict[str, Any], kind: str) -> str | None:
    """What makes a JSON object no valid JSON-RPC 2.0 message of its kind (None when it is one)."""
    if message.get("jsonrpc") != "2.0":
        return f'"jsonrpc" must be "2.0", got {message.get("jsonrpc")!r}'
    if "id" in message and not _usable_id(message["id"]):
        return f'"id" must be an integer or a string, got {message["id"]!r}'
    if kind == "response":
        if "id" not in message or ("result" in message and "error" in message):
            return 'a response needs an "id" and exactly one of "result" and "error"'
        return None
    method = message.get("method")
    if not isinstance(method, str) or not method:
        return f'"method" must be a non-empty string, got {method!r}'
    params = message.get("params")
    if params is not None and not isinstance(params, dict | list):
        return f'"params" must be an object, got {type(params).__name__} {params!r:.60}'
    return None


def _field_errors(exc: Exception) -> str:
    """A short readable list of what did not structure (cattrs' paths such as $.params.range.start.line)."""
    try:
        details = cattrs.transform_error(exc, path="$")
    except Exception:
        details = [str(exc)]
    text = "; ".join(details[:5])
    return text if len(details) <= 5 else f"{text}; ... ({len(details)} problems)"


class AgentProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that validates every incoming message and answers every request."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialize_received = False

    @property
    def _workspace(self) -> Workspace | None:
        return self.__dict__.get("_line_workspace")

    @_workspace.setter
    def _workspace(self, workspace: Workspace | None) -> None:
        """pygls' initialize builds a plain Workspace: make it a LineWorkspace (cheap incremental didChange)."""
        if workspace is not None and not isinstance(workspace, LineWorkspace):
            workspace.__class__ = LineWorkspace
        self.__dict__["_line_workspace"] = workspace

    # ----- entry points from the transport ------------------------------------------------------------------

    def handle_body(self, body: bytes) -> None:
        """Handle one framed message body: validate, structure and dispatch, or answer with an error."""
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            self.send_error(None, PARSE_ERROR, f"the message is not valid JSON: {exc}")
            return
        if isinstance(data, list):
            self._refuse_batch(data)
        elif not isinstance(data, dict):
            self.send_error(
                None, INVALID_REQUEST, f"a message must be a JSON object, got {type(data).__name__}"
            )
        else:
            self.handle_object(data)

    def handle_framing_error(self, error: FramingError) -> None:
        """A message the transport could not deliver: answer it when it was a request (or its id is unknown)."""
        log.warning("%s", error.reason)
        self.send_error(error.request_id, INVALID_REQUEST, error.reason)

    def handle_object(self, data: dict[str, Any]) -> None:
        """Handle one decoded JSON-RPC message."""
        kind = message_kind(data)
        msg_id = data.get("id") if _usable_id(data.get("id")) else None
        problem = envelope_problem(data, kind)
        if problem is not None:
            if kind == "request":
                self.send_error(msg_id, INVALID_REQUEST, f"invalid JSON-RPC request: {problem}")
            else:
                log.warning("ignored an invalid %s: %s", kind, problem)
            return
        if kind != "response" and self.get_message_type(data["method"]) is None:
            data.setdefault("params", None)  # pygls' generic message needs the field (unknown -> -32601 next)
        try:
            if kind != "response":
                self._check_lifecycle(data["method"])
            message = self._structure(data)
            if message is None:
                return
            if data.get("method") == types.INITIALIZE and kind == "request":
                self.initialize_received = True
            self._dispatch(kind, message)
        except RequestError as exc:
            if kind == "request":
                self.send_error(msg_id, exc.code, str(exc))
            else:
                log.warning("ignored %s %s: %s", kind, data.get("method"), exc)
        except Exception as exc:  # pygls answers handler errors itself; this is whatever escaped it
            log.exception("handling %s failed", data.get("method", "a response"))
            if kind == "request":
                self.send_error(msg_id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")

    def _dispatch(self, kind: str, message: Any) -> None:
        """pygls' handle_message without its runtime Protocol isinstance checks (the kind is known already)."""
        ctx = contextvars.copy_context()
        if kind == "request":
            ctx.run(self._handle_request, message.id, message.method, message.params)
        elif kind == "notification":
            ctx.run(self._handle_notification, message.method, message.params)
        elif getattr(message, "error", None) is not None:
            ctx.run(self._handle_response, message.id, None, message.error)
        else:
            ctx.run(self._handle_response, message.id, message.result)

    # ----- checks ---------------------------------------------------------------------------------------------

    def _check_lifecycle(self, method: str) -> None:
        """Refuse what the LSP lifecycle forbids (a request before initialize, a second one, after shutdown)."""
        if method == types.EXIT:
            return
        if method == types.INITIALIZE and self.initialize_received:
            raise RequestError(
                INVALID_REQUEST, "server already initialized (initialize may be sent only once)"
            )
        if self._shutdown:
            raise RequestError(INVALID_REQUEST, f"the server is shutting down: {method} refused")
        if not self.initialize_received and method != types.INITIALIZE:
            raise RequestError(
                SERVER_NOT_INITIALIZED, f"server not initialized: send initialize before {method}"
            )

    def _structure(self, data: dict[str, Any]) -> Any:
        """The typed message (pygls' structure_message); bad params -> RequestError, a bad response -> None."""
        try:
            return self.structure_message(data)
        except JsonRpcException as exc:
            cause = exc.__cause__ or exc
            if "method" in data:
                raise RequestError(
                    INVALID_PARAMS, f"invalid params for {data['method']}: {_field_errors(cause)}"
                ) from None
            self._fail_pending(data["id"], f"the client's response did not fit: {_field_errors(cause)}")
            return None

    def _fail_pending(self, msg_id: Any, reason: str) -> None:
        """A response that cannot be read still ends the request waiting for it (with an error)."""
        log.warning("response %r: %s", msg_id, reason)
        future = self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)
        if future is not None and not future.done():
            future.set_exception(JsonRpcException(message=reason, code=INVALID_PARAMS))

    def _refuse_batch(self, items: list[Any]) -> None:
        """LSP has no batch messages: every request in one gets an error, and nothing in it is run."""
        reason = "batch (array) messages are not part of LSP: send each message on its own"
        ids = [i["id"] for i in items if isinstance(i, dict) and "method" in i and _usable_id(i.get("id"))]
        for msg_id in ids:
            self.send_error(msg_id, INVALID_REQUEST, reason)
        if not ids:
            self.send_error(None, INVALID_REQUEST, reason)

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """Send a JSON-RPC error response (id null when the request's id is unknown)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
