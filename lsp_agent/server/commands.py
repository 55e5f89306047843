"""workspace/executeCommand handlers: ask, cancel, status, search, reindex, apply/reject/undo edits, permissions."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from lsp_agent.server import undo
from lsp_agent.server.command_args import CommandError, object_arg, run_id_arg
from lsp_agent.server.edits import EditPlan
from lsp_agent.server.permissions import permissions_command
from lsp_agent.server.runs import parse_ask
from lsp_agent.server.settle import Selection, find_hunk, reconcile_applied, settle

if TYPE_CHECKING:
    from lsp_agent.server.proposals import PendingProposal
    from lsp_agent.server.server import AgentServer

MAX_TOP_K = 100


def ask(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Start a run in the background and return its id at once."""
    arg = object_arg(
        args,
        "lspAgent.ask",
        '{"task": str, "uri"?, "range"?, "plan"?, "sessionId"?, "model"?, "folder"?, "readFolders"?}',
    )
    try:
        request = parse_ask(arg)
        record = server.runs.start(request)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return {"runId": record.run_id, "sessionId": record.session.id}


def cancel(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Stop a run (within a second, also mid-request)."""
    run_id = run_id_arg(object_arg(args, "lspAgent.cancel", '{"runId": str}'), "lspAgent.cancel")
    if run_id not in server.runs.runs:
        raise CommandError(f"lspAgent.cancel: no run {run_id!r}")
    return {"runId": run_id, "cancelled": server.runs.cancel(run_id)}


async def status(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Index statistics, runs, pending proposals and provider sections (e.g. "mcp")."""
    reconcile_applied(server)  # what the user applied by hand or by a code action is not listed as pending
    status = await server.status()
    return {"index": status.pop("index"), "runs": status.pop("runs"), **status}


async def search(server: AgentServer, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Search the index (in a worker thread); results as the CLI prints them plus `uri`."""
    arg = object_arg(args, "lspAgent.search", '{"query": str, "topK"?: int}')
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


def _selection(pending: PendingProposal, arg: dict[str, Any], command: str) -> Selection:
    """The files and hunks a command names ({"files"?: [uri|path], "hunks"?: [{uri, id|hunk}]}); all when neither."""
    files, hunks = arg.get("files"), arg.get("hunks")
    if files is not None and (not isinstance(files, list) or not all(isinstance(f, str) for f in files)):
        raise CommandError(f'{command}: "files" must be a list of document URIs or workspace-relative paths')
    if hunks is not None and (not isinstance(hunks, list) or not all(isinstance(h, dict) for h in hunks)):
        raise CommandError(f'{command}: "hunks" must be a list of {{"uri": str, "id": str}} objects')
    if files is None and hunks is None:
        return [(f, None) for f in pending.files]
    selection: Selection = [(f, None) for f in pending.select(files)] if files else []
    missing = [f for f in files or [] if not pending.select([f])]
    for ref in hunks or []:
        fp = pending.by_uri(ref.get("uri")) if isinstance(ref.get("uri"), str) else None
        hunk = find_hunk(fp, ref.get("id", ref.get("hunk"))) if fp is not None else None
        if fp is None or (hunk is None and fp.change.kind == "modify"):
            missing.append(f"{ref.get('uri')} change {ref.get('id', ref.get('hunk'))}")
            continue
        if any(f is fp and h is None for f, h in selection):
            continue
        entry = next((h for f, h in selection if f is fp), None)
        if entry is None:
            selection.append((fp, None if hunk is None else [hunk]))
        elif hunk is not None and hunk not in entry:
            entry.append(hunk)
    if missing:
        raise CommandError(
            f"{command}: not pending in run {pending.run_id}: {', '.join(missing)} "
            "(already applied or rejected? lspAgent.status lists what is pending)"
        )
    return selection


def _plan(server: AgentServer, pending: PendingProposal, selection: Selection) -> EditPlan:
    """The WorkspaceEdit for a selection of a pending proposal."""
    return server.proposal_edit(
        pending,
        [(fp, None if hunks is None else [fp.hunks.index(h) for h in hunks]) for fp, hunks in selection],
    )


async def apply_edits(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Send (part of) a proposal with workspace/applyEdit; what the client reports applied is settled."""
    arg = object_arg(args, "lspAgent.applyEdits", '{"runId": str, "files"?: [uri], "hunks"?: [{uri, id}]}')
    run_id = run_id_arg(arg, "lspAgent.applyEdits")
    pending = _pending(server, run_id, "lspAgent.applyEdits")
    reconcile_applied(server)
    if server.proposals.get(run_id) is None:
        return {"runId": run_id, "applied": True, "files": [], "refused": [], "state": pending.state}
    plan = _plan(server, pending, _selection(pending, arg, "lspAgent.applyEdits"))
    result: dict[str, Any] = {"runId": run_id, "applied": False, "files": plan.files, "refused": plan.refused}
    if plan.edit is None:
        server.show_error("lsp-agent: nothing applied: " + "; ".join(plan.refused))
        return {**result, "state": pending.state}
    before = undo.snapshot(server, plan)
    response = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=plan.edit, label=f"lsp-agent: {pending.summary}")
    )
    if response.applied:  # kept for lspAgent.undoApply before settling changes the pending proposal
        undo.remember(server, run_id, pending.session_id, plan, before, pending.root)
    result["applied"] = bool(response.applied)
    if response.failure_reason:
        result["failureReason"] = response.failure_reason
    if response.applied:
        settle(server, pending, "applied", plan.covers, via="workspace/applyEdit result")
    if plan.refused:
        server.show_error("lsp-agent: some edits were refused: " + "; ".join(plan.refused))
    return {**result, "state": pending.state}


def edits_applied(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """A client's claim that it applied edits: checked against the document text, never taken on its word."""
    arg = object_arg(args, "lspAgent.editsApplied", '{"runId": str}')
    pending = _pending(server, run_id_arg(arg, "lspAgent.editsApplied"), "lspAgent.editsApplied")
    before = sum(len(f.hunks) or 1 for f in pending.files)
    reconcile_applied(server, {f.uri for f in pending.files})
    after = sum(len(f.hunks) or 1 for f in pending.files)
    return {
        "runId": pending.run_id,
        "verified": before - after,
        "state": pending.state,
        "remaining": len(pending.files),
    }


def reject_edits(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Reject a run's proposal, or some of its files or hunks, with an optional reason the next ask sees."""
    usage = '{"runId": str, "files"?: [uri], "hunks"?: [{uri, id}], "reason"?: str}'
    arg = object_arg(args, "lspAgent.rejectEdits", usage)
    run_id = run_id_arg(arg, "lspAgent.rejectEdits")
    reason = arg.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise CommandError('lspAgent.rejectEdits: "reason" must be a string')
    pending = _pending(server, run_id, "lspAgent.rejectEdits")
    reconcile_applied(server)  # what the user already applied is not rejected afterwards
    if server.proposals.get(run_id) is None:
        raise CommandError(f"lspAgent.rejectEdits: run {run_id}'s edits were all applied already")
    selection = _selection(pending, arg, "lspAgent.rejectEdits")
    settled = settle(server, pending, "rejected", selection, reason=reason)
    return {
        "runId": run_id,
        "rejected": bool(settled),
        "changes": [s.to_dict() for s in settled],
        "state": pending.state,
        "remaining": [f.change.path for f in pending.files],
    }


async def undo_apply(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Revert the last apply (applyEdits or an Apply code action) exactly; refused when a file changed since."""
    reconcile_applied(server)  # a code action applied just now becomes the last apply
    try:
        return await undo.undo_last_apply(server)
    except undo.UndoRefused as exc:
        raise CommandError(str(exc)) from None


COMMANDS = {
    "lspAgent.ask": ask,
    "lspAgent.cancel": cancel,
    "lspAgent.status": status,
    "lspAgent.search": search,
    "lspAgent.reindex": reindex,
    "lspAgent.applyEdits": apply_edits,
    "lspAgent.rejectEdits": reject_edits,
    "lspAgent.editsApplied": edits_applied,
    "lspAgent.undoApply": undo_apply,
    "lspAgent.permissions": permissions_command,
}
