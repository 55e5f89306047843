"""Conversation commands: start a new conversation, show one, retry its last ask, complete @mentions."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.conversation_memory import estimate_tokens, render_conversation
from lsp_agent.agent.rules import rules_status
from lsp_agent.server.commands import CommandError

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

MAX_COMPLETIONS = 50


def _arg(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    """The single object argument of a command (an empty call counts as {})."""
    if not args:
        return {}
    if len(args) != 1 or not isinstance(args[0], dict):
        raise CommandError(f"{command} expects one argument: {usage}")
    return args[0]


def _session_id(arg: dict[str, Any], command: str, *, required: bool = True) -> str | None:
    """The sessionId field, validated."""
    session_id = arg.get("sessionId")
    if session_id is None and not required:
        return None
    if not isinstance(session_id, str) or not session_id:
        raise CommandError(f'{command}: "sessionId" is required (the conversation\'s id)')
    return session_id


def new_conversation(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Start a fresh conversation: {sessionId?} names it (else the server picks an id); returns {sessionId}."""
    arg = _arg(args, "lspAgent.newConversation", '{"sessionId"?: str}')
    session_id = _session_id(arg, "lspAgent.newConversation", required=False) or uuid.uuid4().hex[:12]
    session = server.session(session_id)
    busy = [
        r.run_id
        for r in server.runs.runs.values()
        if r.session is session and r.state in ("starting", "running")
    ]
    if busy:
        raise CommandError(
            f"lspAgent.newConversation: conversation {session_id} has a run going ({', '.join(busy)}); "
            "cancel it or pick another id"
        )
    session.clear()
    return {"sessionId": session.id}


def conversation(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """A conversation for the transcript view: its exchanges (full answers, notes) and what the prompt keeps."""
    arg = _arg(args, "lspAgent.conversation", '{"sessionId": str}')
    session_id = _session_id(arg, "lspAgent.conversation")
    session = server.sessions.get(session_id)
    if session is None:
        return {"sessionId": session_id, "exchanges": [], "notes": [], "promptTokens": 0, "compacted": 0}
    states = {r.run_id: r.state for r in server.runs.runs.values()}
    finished = [e for e in session.exchanges if e.outcome != "running"]
    text, omitted = render_conversation(finished, session.notes, budget=session.budget, count=session.count)
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
        "promptTokens": estimate_tokens(text),
        "budget": session.budget,
        "compacted": omitted,
    }


def retry(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Ask the conversation's last task again: its pending edits are rejected and the attempt marked retried."""
    from lsp_agent.server.runs import parse_ask
    from lsp_agent.server.settle import settle

    arg = _arg(args, "lspAgent.retry", '{"sessionId": str}')
    session_id = _session_id(arg, "lspAgent.retry")
    session = server.sessions.get(session_id)
    last = session.last() if session is not None else None
    if session is None or last is None:
        raise CommandError(f"lspAgent.retry: conversation {session_id} has no ask to retry; ask first")
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
