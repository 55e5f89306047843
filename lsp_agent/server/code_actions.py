"""Code actions: apply or reject pending agent edits, ask about a selection, ask to fix a diagnostic.

Two shapes, chosen so every client family reads them alike (vscode-languageclient, Neovim, lsprotocol/pygls):
- "Apply" is a CodeAction carrying only its `edit`. No `command` rides along: lsprotocol 2025.0.0 reads any code
  action with a `command` key as a bare Command, which would lose the edit. The server learns that the edit was
  applied from the document text that follows (settle.py), never from a client's claim.
- Everything that runs a server command (reject, ask) is a bare Command, which all clients execute as is.

A code action handler never calls the model and never waits on I/O beyond reading closed files of a proposal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_agent.server import undo
from lsp_agent.server.alternatives import alternative_actions
from lsp_agent.server.proposals import DIAGNOSTIC_SOURCE, HunkSpot, PendingProposal
from lsp_agent.server.settle import hunk_id

if TYPE_CHECKING:
    from lsp_agent.server.edits import EditPlan
    from lsp_agent.server.server import AgentServer

APPLY_KIND = types.CodeActionKind.QuickFix
ASK_KIND = types.CodeActionKind.Refactor
MAX_FIX_ACTIONS = 5


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """True when two ranges share a position (touching counts, so a cursor on a hunk's edge finds it)."""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end


def _wanted(only: list[str] | None, kind: str) -> bool:
    """Respect the client's `only` filter (a kind matches itself and its sub-kinds)."""
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in only)


def code_actions(
    server: AgentServer, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command]:
    """All lsp-agent actions for a range of a document."""
    uri, rng, only = params.text_document.uri, params.range, params.context.only
    only = [str(getattr(k, "value", k)) for k in only] if only else None
    actions: list[types.CodeAction | types.Command] = []
    doc = server.workspace.text_documents.get(uri)
    if doc is not None and _wanted(only, APPLY_KIND.value):
        actions.extend(next_edit_actions(server, uri, rng))  # "Update 3 call sites of `f`" at a changed def
        spots = [
            s
            for s in server.proposals.spots(uri, doc.source, server.workspace.position_codec)
            if _overlaps(s.range, rng)
        ]
        seen: set[str] = set()
        for spot in spots:
            actions.append(_apply_spot(server, spot))
            actions.extend(alternative_actions(spot))  # other versions of the line that pass the tests
            if spot.index >= 0 and (len(spot.file.hunks) > 1 or len(spot.pending.files) > 1):
                actions.append(_reject_spot(spot))
        for spot in spots:
            if spot.pending.run_id in seen:
                continue
            seen.add(spot.pending.run_id)
            if len(spot.pending.files) > 1 or len(spot.file.hunks) > 1:
                actions.append(_apply_all(server, spot.pending))
            if len(spot.pending.files) > 1 and len(spot.file.hunks) > 1:
                actions.append(_reject_file(spot))
            actions.append(_reject(spot.pending))
    if to_fs_path(uri) and _wanted(only, ASK_KIND.value):
        if rng.start != rng.end:
            actions.append(
                types.Command(
                    title="Ask agent about this selection",
                    command="lspAgent.ask",
                    arguments=[{"uri": uri, "range": _range_dict(rng), "needsTask": True}],
                )
            )
    if _wanted(only, APPLY_KIND.value):
        fixes = [d for d in params.context.diagnostics if d.source != DIAGNOSTIC_SOURCE][:MAX_FIX_ACTIONS]
        for diagnostic in fixes:
            actions.append(_ask_fix(uri, diagnostic))
    return actions


def _range_dict(rng: types.Range) -> dict:
    """A Range as plain JSON."""
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _apply_spot(server: AgentServer, spot: HunkSpot) -> types.CodeAction:
    """Apply one hunk (or one created/deleted file), with the WorkspaceEdit inline."""
    plan = server.proposal_edit(spot.pending, [(spot.file, None if spot.index < 0 else [spot.index])])
    action = types.CodeAction(
        title=f"Apply agent edit: {spot.pending.summary}",
        kind=APPLY_KIND,
        is_preferred=True,
        diagnostics=None,
    )
    return _carrying(server, action, plan)


def _apply_all(server: AgentServer, pending: PendingProposal) -> types.CodeAction:
    """Apply the whole proposal (every file, every hunk that still applies)."""
    plan = _whole_proposal(server, pending, pending.summary)
    n, refused = len(pending.files), len(plan.refused)
    refusals = f"; {refused} change{'s' if refused != 1 else ''} refused" if refused else ""
    title = f"Apply all agent edits ({n} file{'s' if n != 1 else ''}{refusals}): {pending.summary}"
    return _carrying(server, types.CodeAction(title=title, kind=APPLY_KIND), plan)


def next_edit_actions(
    server: AgentServer, uri: str, rng: types.Range
) -> list[types.CodeAction | types.Command]:
    """At a changed definition: apply every site of its pending next edit, or dismiss it."""
    actions: list[types.CodeAction | types.Command] = []
    for offer, pending in server.next_edits.live_offers(uri, rng.start.line):
        title = offer.current_title(pending)
        action = types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, is_preferred=True)
        actions.append(_carrying(server, action, _whole_proposal(server, pending, title)))
        dismiss = [{"runId": offer.run_id}]
        actions.append(
            types.Command(title=f"Dismiss: {title}", command="lspAgent.rejectEdits", arguments=dismiss)
        )
    return actions


def _whole_proposal(server: AgentServer, pending: PendingProposal, label: str) -> EditPlan:
    """The WorkspaceEdit of a whole proposal: every file, every hunk that still applies."""
    return server.proposal_edit(pending, [(f, None) for f in pending.files], label)


def _carrying(server: AgentServer, action: types.CodeAction, plan: EditPlan) -> types.CodeAction:
    """The action with the plan's edit (which lspAgent.undoApply can revert once applied), or disabled saying why
    nothing is left to apply."""
    if plan.edit is None:
        action.disabled = types.CodeActionDisabled(reason="; ".join(plan.refused) or "nothing left to apply")
    else:
        action.edit = plan.edit
        undo.offer(server, plan)
    return action


def _reject(pending: PendingProposal) -> types.Command:
    """Reject the whole proposal."""
    return types.Command(
        title=f"Reject agent edit: {pending.summary}",
        command="lspAgent.rejectEdits",
        arguments=[{"runId": pending.run_id}],
    )


def _reject_spot(spot: HunkSpot) -> types.Command:
    """Reject one hunk (named by its stable id, so a neighbour applied meanwhile does not shift it)."""
    line = spot.range.start.line + 1
    return types.Command(
        title=f"Reject this agent change (line {line})",
        command="lspAgent.rejectEdits",
        arguments=[
            {
                "runId": spot.pending.run_id,
                "hunks": [{"uri": spot.file.uri, "id": hunk_id(spot.file, spot.index)}],
            }
        ],
    )


def _reject_file(spot: HunkSpot) -> types.Command:
    """Reject every change of the proposal in this file."""
    return types.Command(
        title=f"Reject all agent changes in {spot.file.change.path}",
        command="lspAgent.rejectEdits",
        arguments=[{"runId": spot.pending.run_id, "files": [spot.file.uri]}],
    )


def _ask_fix(uri: str, diagnostic: types.Diagnostic) -> types.Command:
    """Start a run that fixes one diagnostic (the command starts it; this handler does not)."""
    message = " ".join(diagnostic.message.split())
    short = message if len(message) <= 60 else message[:57] + "..."
    where = f"line {diagnostic.range.start.line + 1}"
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    return types.Command(
        title=f"Ask agent to fix: {short}",
        command="lspAgent.ask",
        arguments=[
            {
                "task": f"Fix this problem reported at {where}{source}: {message}",
                "uri": uri,
                "range": _range_dict(diagnostic.range),
                "withDiagnostics": True,  # clients add the file's diagnostics (its neighbours) as "diagnostics"
            }
        ],
    )
