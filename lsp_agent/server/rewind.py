"""lspAgent.exchanges and lspAgent.rewind: a conversation's exchanges for the clients' pickers, and a rewind to one.

A rewind restores, through one `workspace/applyEdit`, the exact text every file had before the exchanges after N
applied it (the folder's apply journal, agent/conversation/rewind.py); a file whose text (open buffer, else disk) changed since
that apply is refused, saying why, and left as it is, while the others are restored. The conversation then goes
on from N: the later exchanges are left out of the next prompt and their pending edits are dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path

from lsp_agent.agent.conversation.rewind import (
    RewindOutcome,
    default_target,
    exchange_rows,
    finish_rewind,
    plan_rewind,
)
from lsp_agent.server.commands import CommandError
from lsp_agent.server.conversation_commands import _arg, _folder, _session_id
from lsp_agent.server.undo import LastApply, UndoFile, undo_edit
from lsp_agent.workspace.applied import drift_since_apply
from lsp_agent.workspace.paths import PathError, resolve_in_workspace

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.server.server import AgentServer
    from lsp_agent.workspace.apply_journal import RewindFile

TARGET = '{"sessionId"?: str, "uri"?: str, "folder"?: str}'


def _conversation(server: AgentServer, arg: dict[str, Any], command: str) -> tuple[Session, Path]:
    """The conversation a command names and the workspace folder it belongs to."""
    folder = _folder(server, arg, command)
    session = server.session(_session_id(arg, command), folder)
    root = session.root or folder or server.primary_root
    if root is None:
        raise CommandError(f"{command}: no workspace folder is open")
    return session, Path(root)


def exchanges(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """The exchanges of a conversation, numbered from 1, with the files each applied and whether it was rewound."""
    session, root = _conversation(server, _arg(args, "lspAgent.exchanges", TARGET), "lspAgent.exchanges")
    return {"sessionId": session.id, "exchanges": exchange_rows(session, root)}


async def rewind(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Rewind a conversation to exchange N: restore the files applied since (file by file) and go on from N."""
    from lsp_agent.server.settle import (
        reconcile_applied,  # settle.py imports undo.py, which this one uses too
    )

    arg = _arg(args, "lspAgent.rewind", '{"exchange"?: int, "sessionId"?: str, "uri"?: str, "folder"?: str}')
    session, root = _conversation(server, arg, "lspAgent.rewind")
    number = arg.get("exchange")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
        raise CommandError(
            'lspAgent.rewind: "exchange" must be a whole number (0: the conversation\'s start)'
        )
    reconcile_applied(
        server
    )  # a code action applied just now is journaled before the rewind reads the journal
    try:
        number = default_target(session) if number is None else number
        dropped, plan = plan_rewind(session, root, number)
    except ValueError as exc:
        raise CommandError(f"lspAgent.rewind: {exc}") from None
    files, already, refused = _restorable(server, root, plan)
    if files:
        edit = undo_edit(server, LastApply("rewind", session.id, files, root))
        response = await server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"lsp-agent: rewind to exchange {number}")
        )
        if not response.applied:
            reason = response.failure_reason or "the editor did not apply the edit"
            raise CommandError(
                f"lspAgent.rewind: the editor refused the restore ({reason}); nothing was changed"
            )
    restored = [f.path for f in files] + already
    finish_rewind(session, root, number, dropped, restored)
    _forget_runs(server, set(dropped))
    outcome = RewindOutcome(number, dropped, restored, refused)
    server.log_line(f"[conversation {session.id}] {outcome.summary()}")
    if refused:
        server.show_error("lsp-agent: rewind left files as they are: " + "; ".join(refused))
    return {"sessionId": session.id, **outcome.to_dict()}


def _restorable(
    server: AgentServer, root: Path, plan: list[RewindFile]
) -> tuple[list[UndoFile], list[str], list[str]]:
    """(the files to restore as undo items, those that hold their old text already, why each other one is refused)."""
    support = server.edit_support()
    files: list[UndoFile] = []
    already: list[str] = []
    refused: list[str] = []
    for item in plan:
        try:
            path = resolve_in_workspace(root, item.path)
        except PathError as exc:
            refused.append(f"{item.path}: {exc}")
            continue
        now = server.document_state(path).text
        if (problem := drift_since_apply(item.path, now, item.expected)) is not None:
            refused.append(problem)
        elif item.restore is None and now is not None and not (support.document_changes and support.delete):
            refused.append(
                f"{item.path}: the editor cannot delete files through LSP edits; delete it yourself"
            )
        elif item.restore == now:
            already.append(item.path)
        else:
            uri = from_fs_path(str(path)) or path.as_uri()
            files.append(UndoFile(uri, item.path, path, item.restore, now))
    return files, already, refused


def _forget_runs(server: AgentServer, runs: set[str]) -> None:
    """The dropped exchanges' pending edits go, and so does an undo of their apply (their files are back)."""
    for run_id in runs:
        if server.proposals.remove(run_id) is not None:
            server.publish_hints()
    last = server.last_apply
    if last is not None and last.run_id in runs:
        server.last_apply = None


REWIND_COMMANDS = {"lspAgent.exchanges": exchanges, "lspAgent.rewind": rewind}
