"""Conversations from a terminal: `ask --continue`, `ask --retry`, `@mentions` in the task, `lsp-agent conversation`.

Every `ask` keeps its exchange in the conversation store the editor server and ACP share (agent/conversation/store.py;
the workspace's current conversation is remembered), so `ask --continue "..."` follows up on the last ask in this
workspace (in the terminal or the editor) and `ask --retry` runs its task again.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.events import AgentEvent

if TYPE_CHECKING:
    from lsp_agent.agent.conversation.session import Session


@dataclass
class CliAsk:
    """What `ask` runs: the task (typed, or the retried one), the session, and a note for the user."""

    task: str
    session: Session
    note: str = ""


def last_session_id(root: Path) -> str | None:
    """The id of the workspace's current conversation (the editor's or the CLI's), or None."""
    from lsp_agent.agent.conversation.store import default_store

    return default_store().current_id(root)


def load_session(session_id: str) -> Session:
    """A stored conversation (a damaged one is logged and starts empty), or a new one with that id."""
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.agent.conversation.store import default_store

    stored = default_store().load(session_id)
    return stored.session if stored is not None else Session(session_id)


def remember_session(root: Path, session: Session, settings: Any = None) -> None:
    """Save the session (secrets redacted) as the workspace's current one (a failure is a warning, never fatal)."""
    from lsp_agent.agent.conversation.store import default_store
    from lsp_agent.workspace.redaction import redactor_for

    store = default_store()
    try:
        store.save(session, root=root, front_end="cli", redact=redactor_for(settings, root).redact)
        store.set_current(root, session.id)
    except OSError as exc:
        print(f"warning: could not save session {session.id}: {exc}", file=sys.stderr)


def prepare_ask(args: argparse.Namespace, root: Path, task: str) -> CliAsk:
    """The task and session of an `ask`; ValueError says what is missing (no task, nothing to continue)."""
    from lsp_agent.agent.conversation.session import Session

    session_id = getattr(args, "session", None)
    wants_last = getattr(args, "continue_", False) or getattr(args, "retry", False)
    if not session_id and wants_last:
        session_id = last_session_id(root)
        if session_id is None:
            flag = "--retry" if getattr(args, "retry", False) else "--continue"
            raise ValueError(f"{flag}: no earlier ask in {root} to {flag[2:]}; ask without it first")
    session = load_session(session_id) if session_id else Session(_new_id())
    if not getattr(args, "retry", False):
        if not task:
            raise ValueError('no task given; usage: lsp-agent ask "what the agent should do" [--repo PATH]')
        return CliAsk(task, session)
    last = session.last()
    if last is None:
        raise ValueError(f"--retry: session {session.id} has no ask to retry; ask first")
    session.mark_retried(last.run_id)
    note = f"retrying run {last.run_id} of session {session.id}: {last.task}"
    if task:
        note += f" (the new text {task!r} is added to the task)"
        return CliAsk(f"{last.task}\n\n{task}", session, note)
    return CliAsk(last.task, session, note)


def _new_id() -> str:
    """A fresh session id."""
    return "cli-" + uuid.uuid4().hex[:10]


def mention_context(
    task: str, root: Path, index: Any, settings: Any, sink: Any, folders: Any = None
) -> str | None:
    """The context the task's @mentions attach (files read from disk; `@name/...` from a --read-folder)."""
    from lsp_agent.agent.conversation.mentions import MentionSources, read_text_file, resolve_mentions
    from lsp_agent.workspace.redaction import redactor_for
    from lsp_agent.workspace.secrets import secret_files_of

    sources = MentionSources(
        root,
        lambda path: read_text_file(path, settings.max_file_size),
        index=index,
        is_secret=secret_files_of(settings).is_secret,
        redact=redactor_for(settings, root).redact,
        folders=folders,
        redact_in=lambda other: redactor_for(settings, other).redact,
    )
    resolved = resolve_mentions(task, sources)
    if resolved.attached or resolved.problems:
        sink(AgentEvent("context", "", resolved.to_event()))
    return "\n\n".join(resolved.blocks) or None


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`conversation [--session ID] [--json]`."""
    p = commands.add_parser("conversation", help="show the conversation of the last ask (or of --session ID)")
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.add_argument("--session", help="the session id `ask` printed")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_conversation)


def run_conversation(args: argparse.Namespace) -> int:
    """`lsp-agent conversation [--session ID] [--repo PATH] [--json]`: print a saved conversation."""
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    session_id = getattr(args, "session", None) or last_session_id(root)
    if not session_id:
        print(f"error: no conversation in {root} yet; `lsp-agent ask` starts one", file=sys.stderr)
        return 1
    session = load_session(session_id)
    if getattr(args, "json", False):
        print(json.dumps(session.to_dict(), ensure_ascii=False, indent=1))
        return 0
    if not session.exchanges and not session.notes:
        print(f"conversation {session_id}: no exchanges saved")
        return 0
    print(
        f"conversation {session.id} ({len(session.exchanges)} exchanges; continue with `lsp-agent ask --continue`)"
    )
    if session.summary is not None:
        print(f"\n{session.summary.prompt_text()}")
    for exchange in session.exchanges:
        folded = ", in the summary" if exchange.folded else ""
        print(f"\n> {exchange.task}  [run {exchange.run_id}, {exchange.outcome}{folded}]")
        print(exchange.answer.strip() or "(no answer)")
        for line in exchange.full_text(10**9).splitlines()[2:]:
            print(f"  {line}")
    for note in session.notes:
        print(f"\nnote: {note}")
    return 0
