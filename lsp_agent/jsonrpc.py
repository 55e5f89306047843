"""JSON-RPC 2.0 envelopes for both front-ends (the language server and ACP): reading a message, telling its kind,
what makes it invalid, refusing batches, error replies. Each protocol passes its `Envelope` rules."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@dataclass(frozen=True)
class Envelope:
    """Where a protocol's JSON-RPC differs: its name, whether an id may be null, and how a response is told."""

    protocol: str  # "LSP", "ACP": named in the refusal of a batch
    null_id: bool  # ACP's RequestId may be null; LSP's may not
    # LSP: an object with a result or an error is a response even without an id (logged, never answered);
    # ACP: without an id it is a broken request, answered with id null
    idless_response: bool


LSP = Envelope("LSP", null_id=False, idless_response=True)
ACP = Envelope("ACP", null_id=True, idless_response=False)


def error_reply(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def decode(raw: bytes | str) -> tuple[Any, dict[str, Any] | None]:
    """(the decoded JSON value, None) or (None, the -32700 reply) when it is no UTF-8 or JSON this can read."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return None, error_reply(None, PARSE_ERROR, f"the message is not valid UTF-8: {exc}")
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, error_reply(None, PARSE_ERROR, f"the message is not valid JSON: {exc}")
    except RecursionError:  # `[[[[...` a hundred thousand deep
        return None, error_reply(None, PARSE_ERROR, "the message is nested too deeply to read")


def not_an_object(data: Any) -> dict[str, Any]:
    """The reply to a JSON value that is no object (and no batch)."""
    kind = "null" if data is None else type(data).__name__
    return error_reply(None, INVALID_REQUEST, f"a message must be a JSON object, got {kind}")


def usable_id(value: Any, rules: Envelope) -> bool:
    """Request ids are integers or strings (and null where the protocol allows it); a bool is no integer here."""
    if value is None:
        return rules.null_id
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def message_kind(message: dict[str, Any], rules: Envelope) -> str:
    """ "request", "notification" or "response" (an object with neither a method nor a response's fields is a
    broken request: it gets an answer)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    if ("result" in message or "error" in message) and ("id" in message or rules.idless_response):
        return "response"
    return "request"


def envelope_problem(message: dict[str, Any], kind: str, rules: Envelope) -> str | None:
    """What makes a JSON object no valid JSON-RPC 2.0 message of its kind (None when it is one)."""
    if message.get("jsonrpc") != "2.0":
        return f'"jsonrpc" must be "2.0", got {message.get("jsonrpc")!r:.60}'
    if "id" in message and not usable_id(message["id"], rules):
        return f'"id" must be an integer or a string, got {message["id"]!r:.60}'
    if kind == "response":
        return None if "id" in message else 'a response needs an "id"'
    if "method" not in message and "id" not in message:
        return 'a message needs a "method" (a request or notification) or an "id" with a "result" or "error"'
    method = message.get("method")
    if not isinstance(method, str) or not method:
        return f'"method" must be a non-empty string, got {method!r:.60}'
    params = message.get("params")
    if params is not None and not isinstance(params, dict | list):
        return f'"params" must be an object, got {type(params).__name__} {params!r:.60}'
    return None


def response_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with the body of a response (None: nothing); the request waiting for it should fail."""
    if "result" in message and "error" in message:
        return 'a response has exactly one of "result" and "error"'
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict):
            return f'"error" must be an object, got {type(error).__name__}'
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool) or not isinstance(error.get("message"), str):
            return '"error" needs an integer "code" and a string "message"'
    return None


def refuse_batch(items: list[Any], rules: Envelope, advice: str) -> list[dict[str, Any]]:
    """No batch messages (neither LSP nor ACP has them): every request in one gets an error, nothing in it runs."""
    reason = f"batch (array) messages are not part of {rules.protocol}: {advice}"
    replies = [
        error_reply(item["id"], INVALID_REQUEST, reason)
        for item in items
        if isinstance(item, dict) and "method" in item and "id" in item and usable_id(item["id"], rules)
    ]
    return replies or [error_reply(None, INVALID_REQUEST, reason)]
