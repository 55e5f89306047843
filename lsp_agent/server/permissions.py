"""Asking the user, through window/showMessageRequest, whether a run may use a guarded tool."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from lsp_agent.server.client_requests import request_within

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
ANSWERS = {ALLOW_ONCE: "once", ALLOW_SESSION: "session", DENY: "deny"}
ASK_TIMEOUT = 300.0


def describe_call(tool: str, arguments: dict, limit: int = 300) -> str:
    """The tool call as the user reads it in the prompt."""
    args = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(args) > limit:
        args = args[: limit - 3] + "..."
    return f"{tool}({args})"


class EditorPermissionAsker:
    """A PermissionAsker for AgentRun: Allow once / Allow for this session / Deny; no answer means deny.

    "Allow for this session" covers the agent session (the editor's sessionId), so its later asks run the tool
    without asking again; the grants live in `grants` (session id -> tool names), owned by the server.
    """

    def __init__(
        self,
        server: AgentServer,
        run_id: str,
        session_id: str | None = None,
        grants: dict[str, set[str]] | None = None,
        timeout: float = ASK_TIMEOUT,
    ) -> None:
        self.server = server
        self.run_id = run_id
        self.session_id = session_id
        self.grants = grants if grants is not None else {}
        self.timeout = timeout

    async def __call__(self, tool: str, arguments: dict, reason: str) -> str:
        """Ask the user (unless the session already allowed the tool); "once" | "session" | "deny"."""
        granted = self.grants.get(self.session_id or "", set())
        if tool in granted:
            return "session"
        answer = await self._ask(tool, arguments, reason)
        if answer == "session" and self.session_id:
            self.grants.setdefault(self.session_id, set()).add(tool)
        return answer

    async def _ask(self, tool: str, arguments: dict, reason: str) -> str:
        """The window/showMessageRequest round trip."""
        message = f"lsp-agent (run {self.run_id}) wants to run {describe_call(tool, arguments)}: it {reason}."
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=t) for t in (ALLOW_ONCE, ALLOW_SESSION, DENY)],
        )
        try:
            item = await request_within(self.server.window_show_message_request_async(params), self.timeout)
        except TimeoutError:
            self.server.log_line(f"{message} No answer within {self.timeout:.0f} s: denied.")
            return "deny"
        except Exception as exc:
            log.info("permission request failed: %s", exc)
            return "deny"
        title = getattr(item, "title", None) if item is not None else None
        return ANSWERS.get(title or "", "deny")
