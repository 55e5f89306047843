"""Conversation commands: start a new conversation, show one, retry its last ask, complete @mentions."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.conversation.memory import estimate_tokens
from lsp_agent.agent.conversation.rules import rules_status
from lsp_agent.server.commands import CommandError

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

MAX_COMPLETIONS = 50


def _arg(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    """The single object argument of a command (an empty call, or Neovim's empty table `[]`, counts as {})."""
    if not args or args == ([],):
        return {}
    if len(args) != 1 or not isinstance(args[0], dict):
        raise CommandError(f"{command} expects one argument: {usage}")
    return args[0]


def _session_id(arg: dict[str, Any], command: str) -> str | None:
    """The sessionId field, validated (None: the folder's current conversation)."""
    session_id = arg.get("sessionId")
    if session_id is None:
        return None
    if not isinstance(session_id, str) or not session_id:
        raise CommandError(f'{command}: "sessionId" must be a non-empty string (the conversation\'s id)')
    return session_id


def _folder(server: AgentServer, arg: dict[str, Any], command: str) -> Path | None:
    """The workspace folder a command names with "uri" (a file in it) or "folder"; None for the default one."""
    from lsp_agent.server.ask_choices import choose_root

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


def new_conversation(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Start a fresh conversation, current in its folder (the old one stays on disk); returns {sessionId}."""
    usage = '{"sessionId"?: str, "uri"?: str, "folder"?: str}'
    arg = _arg(args, "lspAgent.newConversation", usage)
    session_id = _session_id(arg, "lspAgent.newConversation")
    root = _folder(server, arg, "lspAgent.newConversation")
    existing = server.sessions.get(session_id) if session_id else None
    busy = [
        r.run_id
        for r in server.runs.runs.values()
        if existing is not None and r.session is existing and r.state in ("starting", "running")
    ]
    if busy:
        raise CommandError(
            f"lspAgent.newConversation: conversation {session_id} has a run going ({', '.join(busy)}); "
            "cancel it or pick another id"
        )
    session = server.conversations.start(root, session_id)
    return {"sessionId": session.id}


def conversation(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """A conversation for the transcript view: its summary, exchanges (full answers, notes), what the prompt keeps."""
    arg = _arg(args, "lspAgent.conversation", '{"sessionId"?: str, "uri"?: str, "folder"?: str}')
    session_id = _session_id(arg, "lspAgent.conversation")
    session = server.session(session_id, _folder(server, arg, "lspAgent.conversation"))
    states = {r.run_id: r.state for r in server.runs.runs.values()}
    text, omitted = session.render()
    exchanges = []
    for e in session.exchanges:
        item = e.to_dict()
        item.pop("request", None)
        item["state"] = states.get(e.run_id, "done" if e.outcome != "running" else "unknown")
        exchanges.append(item)
    return {
        "sessionId": session.id,
        "exchanges": exchanges,
        "notes": list(session.notes),
        "summary": session.summary.to_dict() if session.summary is not None else None,
        "promptTokens": estimate_tokens(text),
        "budget": session.budget,
        "compacted": omitted,
        "folded": sum(1 for e in session.exchanges if e.folded),
    }


def retry(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Ask the conversation's last task again: its pending edits are rejected and the attempt marked retried."""
    from lsp_agent.server.runs import parse_ask
    from lsp_agent.server.settle import settle

    arg = _arg(args, "lspAgent.retry", '{"sessionId"?: str, "uri"?: str, "folder"?: str}')
    session_id = _session_id(arg, "lspAgent.retry")
    session = server.session(session_id, _folder(server, arg, "lspAgent.retry"))
    last = session.last()
    if last is None:
        raise CommandError(f"lspAgent.retry: conversation {session.id} has no ask to retry; ask first")
    record = server.runs.runs.get(last.run_id)
    if record is not None and record.state in ("starting", "running"):
        raise CommandError(f"lspAgent.retry: run {last.run_id} is still going; cancel it first, then retry")
    pending = server.proposals.get(last.run_id)
    if pending is not None:
        selection = [(f, None) for f in pending.files]
        settle(server, pending, "rejected", selection, reason="the user retried the ask")
    session.mark_retried(last.run_id)
    request = parse_ask({**last.request, "task": last.task, "sessionId": session.id})
    request = dataclasses.replace(request, follow_up=False)
    started = server.runs.start(request)
    return {"runId": started.run_id, "sessionId": session.id, "task": last.task, "retried": last.run_id}


async def complete_mention(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Completions for a mention being typed: {prefix: "@pkg/ca" | "@Cart" | "#diag", uri?} -> {items}."""
    arg = _arg(args, "lspAgent.completeMention", '{"prefix": str, "uri"?: str}')
    prefix = arg.get("prefix", "")
    if not isinstance(prefix, str):
        raise CommandError('lspAgent.completeMention: "prefix" must be a string such as "@src/" or "@Cart"')
    uri = arg.get("uri") if isinstance(arg.get("uri"), str) else None
    root = server.root_for(uri)
    if prefix.startswith("#"):
        items = [{"label": "#diagnostics", "kind": "diagnostics", "detail": "the current file's diagnostics"}]
        return {"items": [i for i in items if i["label"].startswith(prefix.lower())]}
    typed = prefix[1:] if prefix.startswith("@") else prefix
    items: list[dict[str, str]] = []
    if "selection".startswith(typed.lower()):
        items.append({"label": "@selection", "kind": "selection", "detail": "the selected lines"})
    items += await asyncio.to_thread(_file_items, root, typed, server.settings)
    if typed and "/" not in typed:
        items += await asyncio.to_thread(_symbol_items, server, root, typed)
    return {"items": items[:MAX_COMPLETIONS]}


def _file_items(root: Path, typed: str, settings: Any) -> list[dict[str, str]]:
    """Files and folders under the typed directory whose names start with the typed rest (no hidden, no secret)."""
    from lsp_agent.workspace.paths import PathError, resolve_in_workspace
    from lsp_agent.workspace.secrets import secret_files_of

    folder, _, start = typed.rpartition("/")
    try:
        directory = resolve_in_workspace(root, folder or ".")
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (PathError, OSError):
        return []
    secrets = secret_files_of(settings)
    items = []
    for entry in entries:
        if entry.name.startswith(".") and not start.startswith("."):
            continue
        rel = f"{folder}/{entry.name}" if folder else entry.name
        is_dir = entry.is_dir()
        if not entry.name.startswith(start) or secrets.is_secret(rel, is_dir):
            continue
        items.append(
            {
                "label": "@" + rel + ("/" if is_dir else ""),
                "kind": "folder" if is_dir else "file",
                "detail": "",
            }
        )
        if len(items) >= MAX_COMPLETIONS:
            break
    return items


def _symbol_items(server: AgentServer, root: Path, typed: str) -> list[dict[str, str]]:
    """Symbols of the index whose names start with the typed text."""
    index = server.indexes.index_for(root)
    search = getattr(index, "symbols_starting_with", None)
    if index is None or search is None:
        return []
    try:
        hits = search(typed, limit=MAX_COMPLETIONS)
    except Exception:  # noqa: BLE001 - a busy or closed index offers no symbols this time
        return []
    return [
        {"label": "@" + name, "kind": "symbol", "detail": f"{kind} in {path}:{line}"}
        for name, kind, path, line in hits
    ]


def rules(server: AgentServer, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The project rules of each workspace folder: files loaded, files left out and why, the status line."""
    return rules_status(server.workspace_roots(), server.settings)


CONVERSATION_COMMANDS = {
    "lspAgent.newConversation": new_conversation,
    "lspAgent.conversation": conversation,
    "lspAgent.retry": retry,
    "lspAgent.completeMention": complete_mention,
    "lspAgent.rules": rules,
}
