"""The arguments of workspace/executeCommand: CommandError and the readers every command module shares."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.server.ask_choices import choose_root

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer


class CommandError(Exception):
    """Bad command arguments; the message tells the caller what to send."""


def object_arg(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    """The single object argument of a command."""
    if len(args) != 1 or not isinstance(args[0], dict):
        raise CommandError(f"{command} expects one argument: {usage}")
    return args[0]


def optional_object_arg(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    """The single object argument of a command (an empty call, or Neovim's empty table `[]`, counts as {})."""
    if not args or args == ([],):
        return {}
    return object_arg(args, command, usage)


def run_id_arg(arg: dict[str, Any], command: str) -> str:
    """The runId field, validated."""
    run_id = arg.get("runId")
    if not isinstance(run_id, str) or not run_id:
        raise CommandError(f'{command}: "runId" is required (the id lspAgent.ask returned)')
    return run_id


def session_id_arg(arg: dict[str, Any], command: str) -> str | None:
    """The sessionId field, validated (None: the folder's current conversation)."""
    session_id = arg.get("sessionId")
    if session_id is None:
        return None
    if not isinstance(session_id, str) or not session_id:
        raise CommandError(f'{command}: "sessionId" must be a non-empty string (the conversation\'s id)')
    return session_id


def folder_arg(server: AgentServer, arg: dict[str, Any], command: str) -> Path | None:
    """The workspace folder a command names with "uri" (a file in it) or "folder"; None for the default one."""
    uri, folder = arg.get("uri"), arg.get("folder")
    if not isinstance(uri, str | None) or not isinstance(folder, str | None):
        raise CommandError(
            f'{command}: "uri" and "folder" must be strings (a file URI, a folder URI or path)'
        )
    if uri is None and folder is None:
        return server.primary_root
    try:
        return choose_root(server, uri, folder)
    except ValueError as exc:
        raise CommandError(str(exc).replace("lspAgent.ask", command)) from None
