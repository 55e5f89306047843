"""Asking the user, through window/showMessageRequest, whether a run may use a guarded tool; listing the answers."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_agent.agent.consent.permissions import ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ALWAYS, REJECT_ONCE
from lsp_agent.agent.consent.store import PREFIX_TOOLS, PermissionStore, command_argv, command_prefix
from lsp_agent.server.client_requests import request_within

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

# The four options every editor knows (ACP's permission option kinds), as the prompt's button titles.
TITLES = {
    "Allow once": ALLOW_ONCE,
    "Allow always": ALLOW_ALWAYS,
    "Reject once": REJECT_ONCE,
    "Reject always": REJECT_ALWAYS,
}
ASK_TIMEOUT = 300.0


def describe_call(tool: str, arguments: dict, limit: int = 300) -> str:
    """The tool call as the user reads it in the prompt."""
    args = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(args) > limit:
        args = args[: limit - 3] + "..."
    return f"{tool}({args})"


class EditorPermissionAsker:
    """A PermissionAsker for AgentRun: Allow once / Allow always / Reject once / Reject always.

    No answer (dismissed, timed out) denies this call only. What the answers are remembered for is the
    PermissionGate's business (the session, or the workspace's store).
    """

    def __init__(self, server: AgentServer, run_id: str, timeout: float = ASK_TIMEOUT) -> None:
        self.server = server
        self.run_id = run_id
        self.timeout = timeout

    async def __call__(self, tool: str, arguments: dict, reason: str) -> str:
        """The window/showMessageRequest round trip; one of the four answers, or "dismissed"."""
        message = f"lsp-agent (run {self.run_id}) wants to run {describe_call(tool, arguments)}: it {reason}."
        if tool in PREFIX_TOOLS and (argv := command_argv(arguments)):
            message += f' "Always" answers cover commands starting with: {" ".join(command_prefix(argv))}'
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=t) for t in TITLES],
        )
        try:
            item = await request_within(self.server.window_show_message_request_async(params), self.timeout)
        except TimeoutError:
            self.server.log_line(f"{message} No answer within {self.timeout:.0f} s: denied.")
            return "dismissed"
        except Exception as exc:
            log.info("permission request failed: %s", exc)
            return "dismissed"
        title = getattr(item, "title", None) if item is not None else None
        return TITLES.get(title or "", "dismissed")


def permissions_command(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """lspAgent.permissions {action: "list" | "revoke", key?, all?, workspace?}: the remembered "always" answers."""
    from lsp_agent.server.commands import CommandError  # commands.py imports this module

    arg = args[0] if len(args) == 1 and isinstance(args[0], dict) else None
    usage = '{"action": "list"} or {"action": "revoke", "key": "run_command: pytest -q" | "all": true}'
    if arg is None or arg.get("action") not in ("list", "revoke"):
        raise CommandError(f"lspAgent.permissions expects one argument: {usage}")
    stores = [PermissionStore(root) for root in _roots(server, arg.get("workspace"))]
    if arg["action"] == "list":
        return {"workspaces": [_listing(store) for store in stores]}
    key, everything = arg.get("key"), arg.get("all") is True
    if not everything and (not isinstance(key, str) or not key.strip()):
        raise CommandError(
            f'lspAgent.permissions revoke needs "key" (as "list" shows it) or "all": true; {usage}'
        )
    try:
        revoked = [r.to_dict() for store in stores for r in store.revoke(None if everything else key)]
    except OSError as exc:
        raise CommandError(f"lspAgent.permissions: could not update the permission file: {exc}") from None
    if not revoked and not everything:
        raise CommandError(f'lspAgent.permissions: no remembered permission {key!r} (see action "list")')
    return {"revoked": revoked, "workspaces": [_listing(store) for store in stores]}


def _roots(server: AgentServer, workspace: Any) -> list[Path]:
    """The workspace folders a permissions command acts on (one when `workspace` names it)."""
    from lsp_agent.server.commands import CommandError

    roots = server.workspace_roots()
    if workspace is None:
        if not roots:
            raise CommandError("lspAgent.permissions: no workspace folder is open")
        return roots
    path = to_fs_path(workspace) if isinstance(workspace, str) and "://" in workspace else workspace
    if not isinstance(path, str) or not path:
        raise CommandError('lspAgent.permissions: "workspace" must be a folder URI or path')
    return [Path(path)]


def _listing(store: PermissionStore) -> dict[str, Any]:
    """One workspace's remembered rules as JSON."""
    return {
        "workspace": str(store.workspace),
        "file": str(store.path),
        "rules": [r.to_dict() for r in store.rules()],
    }
