"""Methods of ACP v1 that the SDK (agent-client-protocol 0.12.1) does not route to an agent, routed on our connection.

- `session/resume`, `session/close` and `session/fork` are routed only when the connection was made with
  `use_unstable_protocol=True` (else they answer -32601); resume and close are in the v1 schema, fork is marked
  unstable there; this agent implements all three.
- `session/delete` is in the schema (DeleteSessionRequest, `sessionCapabilities.delete`) and in
  `acp.meta.AGENT_METHODS`, but `acp.agent.router.build_agent_router` has no route for it.

The routes are added to the connection's router whatever transport made the connection (stdio or another), at
`on_connect`. The router is reached through the connection's private `_conn._handler` (the SDK offers no public
way to add a route); when a later SDK moves it, a warning says which methods stay unrouted.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp.meta import AGENT_METHODS
from acp.router import MessageRouter, Route
from acp.schema import CloseSessionRequest, DeleteSessionRequest, ForkSessionRequest, ResumeSessionRequest
from acp.utils import normalize_result
from pydantic import BaseModel

log = logging.getLogger(__name__)


def add_missing_routes(conn: Any, agent: Any) -> None:
    """Route session/resume, session/close, session/fork and session/delete to the agent's methods here."""
    router = getattr(getattr(conn, "_conn", None), "_handler", None)
    if not isinstance(router, MessageRouter):
        log.warning(
            "the ACP SDK's router was not found: session/resume, close, fork and delete stay unrouted"
        )
        return
    for key, model, handler in (
        ("session_resume", ResumeSessionRequest, agent.resume_session),
        ("session_close", CloseSessionRequest, agent.close_session),
        ("session_delete", DeleteSessionRequest, agent.delete_session),
        ("session_fork", ForkSessionRequest, agent.fork_session),
    ):
        router.add_route(
            Route(
                method=AGENT_METHODS[key],
                func=_caller(model, handler),
                kind="request",
                adapt_result=normalize_result,
            )
        )


def _caller(
    model: type[BaseModel], handler: Callable[..., Awaitable[Any]]
) -> Callable[[Any], Awaitable[Any]]:
    """Validate the params with the schema's model and call the handler with its fields, `_meta`'s keys as keyword
    arguments (as the SDK's routes do, but a `_meta` key named like a field cannot replace the field)."""

    async def call(params: Any) -> Any:
        request = model.model_validate(params)
        fields = {name: getattr(request, name) for name in model.model_fields if name != "field_meta"}
        meta = {key: value for key, value in (request.field_meta or {}).items() if key not in fields}
        return await handler(**fields, **meta)

    return call
