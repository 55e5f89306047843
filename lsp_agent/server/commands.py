"""workspace/executeCommand handlers: lspAgent.ask, cancel, status, search, reindex, applyEdits, rejectEdits."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from lsp_agent.server.edits import build_edit
from lsp_agent.server.runs import parse_ask

if TYPE_CHECKING:
    from lsp_agent.server.proposals import PendingProposal
    from lsp_agent.server.server import AgentServer

MAX_TOP_K = 100


class CommandError(Exception):
    """Bad command arguments; the message tells the caller what to send."""


def _arg(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    """The single object argument of a command."""
    if len(args) != 1 or not isinstance(args[0], dict):
        raise CommandError(f"{command} expects one argument: {usage}")
    return args[0]


def _run_id(arg: dict[str, Any], command: str) -> str:
    """The runId field, validated."""
    run_id = arg.get("runId")
    if not isinstance(run_id, str) or not run_id:
        raise CommandError(f'{command}: "runId" is required (the id lspAgent.ask returned)')
    return run_id


def ask(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Start a run in the background and return its id at once."""
    arg = _arg(args, "lspAgent.ask", '{"task": str, "uri"?, "range"?, "plan"?, "sessionId"?}')
    try:
        request = parse_ask(arg)
        record = server.runs.start(request)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return {"runId": record.run_id, "sessionId": record.session.id}


def cancel(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Stop a run (within a second, also mid-request)."""
    run_id = _run_id(_arg(args, "lspAgent.cancel", '{"runId": str}'), "lspAgent.cancel")
    if run_id not in server.runs.runs:
        raise CommandError(f"lspAgent.cancel: no run {run_id!r}")
    return {"runId": run_id, "cancelled": server.runs.cancel(run_id)}


async def status(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Index statistics, runs, pending proposals and provider sections (e.g. "mcp")."""
    status = await server.status()
    return {"index": status.pop("index"), "runs": status.pop("runs"), **status}


async def search(server: AgentServer, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Search the index (in a worker thread); results as the CLI prints them plus `uri`."""
    arg = _arg(args, "lspAgent.search", '{"query": str, "topK"?: int}')
    query, top_k = arg.get("query"), arg.get("topK", 10)
    if not isinstance(query, str) or not query.strip():
        raise CommandError('lspAgent.search: "query" is required (a non-empty string)')
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise CommandError(f'lspAgent.search: "topK" must be a whole number from 1 to {MAX_TOP_K}')
    await server.indexes.wait_ready(timeout=30)
    return await asyncio.to_thread(server.indexes.search, query, top_k)


def reindex(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Rebuild the index of every folder in the background."""
    server.indexes.reindex(rebuild=True)
    return {"started": True, "folders": [str(r) for r in server.indexes.folders]}


def _pending(server: AgentServer, run_id: str, command: str) -> PendingProposal:
    """The pending proposal of a run, or a clear error."""
    pending = server.proposals.get(run_id)
    if pending is None:
        run = server.runs.runs.get(run_id)
        if run is None:
            raise CommandError(f"{command}: no run {run_id!r}")
        if run.state in ("starting", "running"):
            raise CommandError(f"{command}: run {run_id} is still running; its edits come when it ends")
        raise CommandError(
            f"{command}: run {run_id} has no pending edits (none proposed, or all applied/rejected)"
        )
    return pending


async def apply_edits(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Send (part of) a proposal with workspace/applyEdit and report what the client applied."""
    arg = _arg(args, "lspAgent.applyEdits", '{"runId": str, "files"?: [uri]}')
    run_id = _run_id(arg, "lspAgent.applyEdits")
    files = arg.get("files")
    if files is not None and (not isinstance(files, list) or not all(isinstance(f, str) for f in files)):
        raise CommandError('lspAgent.applyEdits: "files" must be a list of document URIs')
    pending = _pending(server, run_id, "lspAgent.applyEdits")
    selected = pending.select(files)
    if not selected:
        raise CommandError(f"lspAgent.applyEdits: none of {files} is part of run {run_id}'s pending edits")
    plan = build_edit(
        [(f, None) for f in selected],
        server.document_state,
        server.edit_support(),
        server.workspace.position_codec,
        annotation_id=f"lsp-agent/{run_id}",
        label=f"lsp-agent: {pending.summary}",
    )
    result: dict[str, Any] = {"runId": run_id, "applied": False, "files": plan.files, "refused": plan.refused}
    if plan.edit is None:
        server.show_error("lsp-agent: nothing applied: " + "; ".join(plan.refused))
        return result
    response = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=plan.edit, label=f"lsp-agent: {pending.summary}")
    )
    result["applied"] = bool(response.applied)
    if response.failure_reason:
        result["failureReason"] = response.failure_reason
    if response.applied:
        record_applied(server, pending, plan.files, plan.refused)
    if plan.refused:
        server.show_error("lsp-agent: some edits were refused: " + "; ".join(plan.refused))
    return result


def record_applied(
    server: AgentServer, pending: PendingProposal, paths: list[str], refused: list[str]
) -> None:
    """Note on the session what the user applied, drop it from the pending proposal, refresh the hints."""
    done = [f for f in pending.files if f.change.path in set(paths)]
    pending.drop(done)
    note = f"user applied the proposal of run {pending.run_id} ({pending.summary}) to: {', '.join(paths)}"
    if refused:
        note += f"; refused because the user had edited those lines: {'; '.join(refused)}"
    _record(server, pending, note)
    server.proposals.prune(pending.run_id)
    server.publish_hints()


def edits_applied(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Sent by the client after it applied a code action's edit: record it and clear what was applied."""
    arg = _arg(args, "lspAgent.editsApplied", '{"runId": str, "uri"?: str, "hunk"?: int, "files"?: [path]}')
    pending = _pending(server, _run_id(arg, "lspAgent.editsApplied"), "lspAgent.editsApplied")
    uri, hunk = arg.get("uri"), arg.get("hunk")
    if isinstance(uri, str) and isinstance(hunk, int) and hunk >= 0:
        fp = pending.by_uri(uri)
        if fp is not None:
            pending.drop_hunk(fp, hunk)
            _record(
                server, pending, f"user applied part of run {pending.run_id}'s proposal in {fp.change.path}"
            )
            server.proposals.prune(pending.run_id)
            server.publish_hints()
        return {"runId": pending.run_id, "remaining": len(pending.files)}
    paths = arg.get("files")
    if isinstance(uri, str) and (fp := pending.by_uri(uri)) is not None:
        paths = [fp.change.path]
    if not isinstance(paths, list):
        paths = [f.change.path for f in pending.files]
    refused = [r for r in arg.get("refused") or [] if isinstance(r, str)]
    record_applied(server, pending, [p for p in paths if isinstance(p, str)], refused)
    if refused:
        server.show_error("lsp-agent: some edits were refused: " + "; ".join(refused))
    return {"runId": pending.run_id, "remaining": len(pending.files)}


def reject_edits(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Drop a run's pending proposal, recording the reason on its session."""
    arg = _arg(args, "lspAgent.rejectEdits", '{"runId": str, "reason"?: str}')
    run_id = _run_id(arg, "lspAgent.rejectEdits")
    reason = arg.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise CommandError('lspAgent.rejectEdits: "reason" must be a string')
    pending = _pending(server, run_id, "lspAgent.rejectEdits")
    server.proposals.remove(run_id)
    paths = ", ".join(f.change.path for f in pending.files)
    note = f"user rejected the proposal of run {run_id} ({pending.summary}; files: {paths})"
    if reason and reason.strip():
        note += f": {reason.strip()}"
    _record(server, pending, note)
    server.publish_hints()
    return {"runId": run_id, "rejected": True}


def _record(server: AgentServer, pending: PendingProposal, note: str) -> None:
    """Add a note to the session the proposal's run belonged to."""
    if pending.session_id:
        server.session(pending.session_id).record(note)
    server.log_line(f"[run {pending.run_id}] {note}")


COMMANDS = {
    "lspAgent.ask": ask,
    "lspAgent.cancel": cancel,
    "lspAgent.status": status,
    "lspAgent.search": search,
    "lspAgent.reindex": reindex,
    "lspAgent.applyEdits": apply_edits,
    "lspAgent.rejectEdits": reject_edits,
    "lspAgent.editsApplied": edits_applied,
}
