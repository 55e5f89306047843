"""JSON-RPC hardening of pygls: every request gets a result or an error, bad input never stops the server.

pygls 2.1 drops many malformed messages without a word (a bad `jsonrpc` or `method`, a batch array, params it
cannot structure) and its reader allocates whatever Content-Length announces. AgentProtocol checks each message
against JSON-RPC 2.0 and the LSP lifecycle before pygls dispatches it:

    not JSON, not UTF-8, nested too deeply -32700 ParseError (id null)
    not an object, bad jsonrpc/method/id   -32600 InvalidRequest (the request's id when it has a usable one)
    a batch array (LSP has no batches)     -32600 for each request in it (one error with id null if none)
    params that do not fit the method      -32602 InvalidParams, naming the offending field
    unknown method                         -32601 MethodNotFound (pygls)
    a request before initialize            -32002 ServerNotInitialized; notifications are dropped (exit is not)
    a second initialize                    -32600 "server already initialized" (the first session is kept)
    a request after shutdown               -32600 InvalidRequest
    a malformed response of the client     the request waiting for it fails with an error (not a hang)

The envelope rules shared with ACP are in lsp_agent/jsonrpc.py. Notifications are never answered: their problems
are logged. The transport (stdio through the event loop's own pipe reader, or TCP) feeds the bytes through
framing.MessageFramer.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace

from lsp_agent.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LSP,
    decode,
    envelope_problem,
    error_reply,
    message_kind,
    not_an_object,
    refuse_batch,
    response_problem,
    usable_id,
)
from lsp_agent.server.documents import LineWorkspace
from lsp_agent.server.framing import FramingError

log = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002  # LSP's own code


class RequestError(Exception):
    """A request to refuse with a JSON-RPC error (code, message)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


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
        data, unreadable = decode(body)
        if unreadable is not None:
            self._send_data(unreadable)
        elif isinstance(data, list):
            for reply in refuse_batch(data, LSP, "send each message on its own"):
                self._send_data(reply)
        elif not isinstance(data, dict):
            self._send_data(not_an_object(data))
        else:
            self.handle_object(data)

    def handle_framing_error(self, error: FramingError) -> None:
        """A message the transport could not deliver: answer it when it was a request (or its id is unknown)."""
        log.warning("%s", error.reason)
        self.send_error(error.request_id, INVALID_REQUEST, error.reason)

    def handle_object(self, data: dict[str, Any]) -> None:
        """Handle one decoded JSON-RPC message."""
        kind = message_kind(data, LSP)
        msg_id = data.get("id") if usable_id(data.get("id"), LSP) else None
        problem = envelope_problem(data, kind, LSP)
        if problem is not None:
            if kind == "request":
                self.send_error(msg_id, INVALID_REQUEST, f"invalid JSON-RPC request: {problem}")
            else:
                log.warning("ignored an invalid %s: %s", kind, problem)
            return
        if kind == "response" and (broken := response_problem(data)) is not None:
            self._fail_pending(data["id"], f"the client's response was malformed: {broken}")
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

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """Send a JSON-RPC error response (id null when the request's id is unknown)."""
        self._send_data(error_reply(msg_id, code, message))
