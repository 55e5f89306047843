"""JSON-RPC checks of what an ACP client sends, before the SDK sees it: every request answered, nothing fatal.

agent-client-protocol 0.12.1's Connection trusts its input: a line that is JSON but no object (`[]`, `5`, `"x"`)
raises AttributeError in Connection._process_message (`message.get`) and ends the receive loop, so the process
exits; `null` is read as end of input (NdjsonTransport.receive returns None), so the agent stops silently; a line
that is no JSON is logged and dropped without an answer; the envelope is never checked (a "1.0" jsonrpc, an object
id that then fails as a dict key, an `error` that is no object). check_message() sorts each line first:

    not JSON, not UTF-8, nested too deeply     -32700 ParseError (id null)
    not an object, bad jsonrpc/method/id       -32600 InvalidRequest (the request's id when it has a usable one)
    neither method nor id nor result/error     -32600 InvalidRequest (id null)
    a batch array (ACP has no batches)         -32600 for each request in it (one error with id null if none)
    initialize with a protocolVersion that is no integer 0..65535, or a cwd that cannot be a project
                                               -32602 InvalidParams
    a response of the client that is malformed the request waiting for it fails with an error (not a hang)

Notifications are never answered: their problems are logged. The envelope rules shared with the language server
are in lsp_agent/jsonrpc.py.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from lsp_agent.jsonrpc import (
    ACP,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    decode,
    envelope_problem,
    error_reply,
    message_kind,
    not_an_object,
    refuse_batch,
    response_problem,
    usable_id,
)

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one line; a longer one is skipped and refused
# Methods whose params name the folder a session works in (and, as the SDK routes them, extra read folders).
FOLDER_METHODS = ("session/new", "session/load", "session/resume", "session/fork")
SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))
LEADING_ID = re.compile(
    rb'^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,200}"\s*,){0,2}\s*"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")'
)


def project_folder_problem(folder: Any) -> str | None:
    """Why a session's folder cannot be a project (the agent indexes and may edit all of it), or None.

    Refused: the file system root, /proc, /sys and /dev (and anything in them), the home directory itself and
    the folders above it: each would index (and offer to edit) a whole machine or a whole account.
    """
    if not isinstance(folder, str) or not folder.startswith("/"):
        return None  # not absolute: the agent's own check says so
    try:
        path = Path(folder).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    advice = "open a project folder instead (the agent indexes, and may edit, everything under its folder)"
    if path == Path(path.anchor):
        return f"cwd {folder!r} is the file system root, which cannot be a project: {advice}"
    for tree in SYSTEM_TREES:
        if path == tree or tree in path.parents:
            return f"cwd {folder!r} is in {tree}, a system tree that cannot be a project: {advice}"
    home = Path.home().resolve()
    if path == home or path in home.parents:
        where = "the home directory" if path == home else "a folder above the home directory"
        return f"cwd {folder!r} is {where}, which cannot be a project: {advice}"
    return None


def params_problem(method: str, params: Any) -> str | None:
    """What the agent cannot serve in a request's params, checked before the SDK's lenient validation."""
    if not isinstance(params, dict):
        return None  # the SDK's validation answers -32602 itself
    if method == "initialize":
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= 65535:
            return f"protocolVersion must be an integer from 0 to 65535 (ACP's major version, 1), got {version!r:.60}"
    if method in FOLDER_METHODS:
        folders = [params.get("cwd")]
        extra = params.get("additionalDirectories")
        folders += extra if isinstance(extra, list) else []
        for folder in folders:
            if (problem := project_folder_problem(folder)) is not None:
                return problem
    return None


def check_message(raw: bytes | str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the message to hand to the SDK or None, the error responses to send back) for one line or frame."""
    data, unreadable = decode(raw)
    if unreadable is not None:
        return None, [unreadable]
    if isinstance(data, list):
        return None, refuse_batch(data, ACP, "send each message on its own line")
    if not isinstance(data, dict):
        return None, [not_an_object(data)]
    return check_object(data)


def check_object(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """check_message for a decoded JSON object."""
    kind = message_kind(data, ACP)
    msg_id = data.get("id") if usable_id(data.get("id"), ACP) else None
    problem = envelope_problem(data, kind, ACP)
    if problem is None and kind == "request":
        if (invalid := params_problem(data["method"], data.get("params"))) is not None:
            return None, [
                error_reply(msg_id, INVALID_PARAMS, f"invalid params for {data['method']}: {invalid}")
            ]
    if problem is None and kind == "response" and (broken := response_problem(data)) is not None:
        log.warning("the client's response %r is malformed: %s", msg_id, broken)
        return error_reply(msg_id, INTERNAL_ERROR, f"the client's response was malformed: {broken}"), []
    if problem is None:
        return data, []
    if kind == "request":
        return None, [error_reply(msg_id, INVALID_REQUEST, f"invalid JSON-RPC request: {problem}")]
    log.warning("ignored an invalid %s: %s", kind, problem)
    return None, []


def oversized_reply(prefix: bytes, size: int) -> dict[str, Any]:
    """The error for a line above MAX_MESSAGE_BYTES (its id read from its first bytes when it leads)."""
    match = LEADING_ID.match(prefix)
    msg_id: Any = None
    if match:
        try:
            msg_id = json.loads(match.group(1))
        except ValueError:
            msg_id = None
    mib = MAX_MESSAGE_BYTES // (1024 * 1024)
    reason = f"the message of more than {size} bytes exceeds lsp-agent's {mib} MiB limit and was discarded"
    return error_reply(msg_id, INVALID_REQUEST, reason)
