"""ACP's permission step: session/request_permission for exec and MCP tools (the PermissionAsker) and for edits.

Every question offers the four options the editors show (allow_once, allow_always, reject_once, reject_always).
A client that does not answer within the timeout, or a turn that is cancelled, counts as reject_once. "Always"
answers for edits are kept in the same per-workspace PermissionStore the language server and the CLI use, under the
rule name `edit_files` (so `lsp-agent permissions revoke edit_files` forgets it).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import helpers
from acp.schema import PermissionOption, ToolCallLocation, ToolCallUpdate

from lsp_agent.agent.consent.permissions import ALLOW_ALWAYS, ALLOW_ONCE, ANSWERS, REJECT_ALWAYS, REJECT_ONCE
from lsp_agent.agent.consent.store import PermissionStore, rule_for
from lsp_agent.workspace.proposal import FileChange

log = logging.getLogger(__name__)

EDIT_RULE = "edit_files"  # the permission-store name of "the agent may write files"
DEFAULT_TIMEOUT = 300.0
OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow always", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    PermissionOption(option_id=REJECT_ALWAYS, name="Reject always", kind="reject_always"),
]


@dataclass
class PermissionRequests:
    """session/request_permission for one session; pending questions are answered reject_once on cancel."""

    conn: Any  # acp's AgentSideConnection (the client)
    session_id: str
    timeout: float = DEFAULT_TIMEOUT
    _pending: set[asyncio.Task] = field(default_factory=set)

    async def ask(self, tool_call: ToolCallUpdate) -> str:
        """The user's answer: one of ANSWERS (reject_once on timeout, cancellation or a malformed reply)."""
        request = self.conn.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=OPTIONS
        )
        task = asyncio.ensure_future(request)
        self._pending.add(task)
        try:
            response = await asyncio.wait_for(task, self.timeout)
        except TimeoutError:
            log.warning("no answer to a permission request within %.0f s: rejected once", self.timeout)
            return REJECT_ONCE
        except asyncio.CancelledError:
            if task.cancelled():  # cancel_all: the turn was cancelled, not us
                return REJECT_ONCE
            raise
        except Exception as exc:  # noqa: BLE001 - a client error is a "no"
            log.warning("permission request failed: %s", exc)
            return REJECT_ONCE
        finally:
            self._pending.discard(task)
        outcome = response.outcome
        option = getattr(outcome, "option_id", None)
        return option if getattr(outcome, "outcome", "") == "selected" and option in ANSWERS else REJECT_ONCE

    def cancel_all(self) -> None:
        """Withdraw every open question (the turn was cancelled)."""
        for task in list(self._pending):
            task.cancel()


@dataclass
class ToolAsker:
    """The PermissionAsker of a run: asks the client about exec and MCP tools on the tool call in flight."""

    requests: PermissionRequests
    current_call: Callable[[], str | None]
    read_only: Callable[[], bool] = lambda: False

    async def __call__(self, tool: str, arguments: dict, reason: str) -> str:
        """One answer of ANSWERS ("dismissed" in ask mode: refused now, asked again in code mode)."""
        if self.read_only():
            return "dismissed"
        from lsp_agent.acp.updates import tool_kind, tool_title

        update = ToolCallUpdate(
            tool_call_id=self.current_call() or f"ask-{uuid.uuid4().hex[:8]}",
            title=f"{tool_title(tool, arguments)} ({reason})",
            kind=tool_kind(tool),
            status="pending",
            raw_input=arguments,
        )
        return await self.requests.ask(update)


@dataclass
class EditConsent:
    """Decides whether one proposed file change may be written: settings, remembered answers, then the user."""

    requests: PermissionRequests
    root: Path
    settings_rules: dict[str, str]
    current_call: Callable[[], str | None]
    store: PermissionStore | None = None
    session_always: str | None = None  # "allow" | "deny" after an "always" answer that could not be stored
    on_approved: Callable[[Any], None] = lambda content: None  # gets the diff of every approved change

    async def decide(self, change: FileChange) -> tuple[bool, str]:
        """(allowed, how): how is "settings", "remembered" or the user's answer."""
        allowed, how = await self._decide(change)
        if allowed:
            self.on_approved(diff_content(str(self.root / change.path), change))
        return allowed, how

    async def _decide(self, change: FileChange) -> tuple[bool, str]:
        """decide() without the bookkeeping."""
        rule = self.settings_rules.get(EDIT_RULE)
        if rule in ("allow", "deny"):
            return rule == "allow", "settings"
        remembered = self._remembered()
        if remembered is not None:
            return remembered == "allow", "remembered"
        answer = await self.requests.ask(self.question(change))
        if answer in (ALLOW_ALWAYS, REJECT_ALWAYS):
            self._remember("allow" if answer == ALLOW_ALWAYS else "deny")
        return answer in (ALLOW_ONCE, ALLOW_ALWAYS), answer

    def question(self, change: FileChange) -> ToolCallUpdate:
        """The tool call the client shows: the edit's diff and where it lands."""
        path = str(self.root / change.path)
        verb = {"create": "Create", "delete": "Delete"}.get(change.kind, "Edit")
        return ToolCallUpdate(
            tool_call_id=self.current_call() or f"edit-{uuid.uuid4().hex[:8]}",
            title=f"{verb} {change.path}",
            kind="delete" if change.kind == "delete" else "edit",
            status="pending",
            content=[diff_content(path, change)],
            locations=[ToolCallLocation(path=path, line=first_changed_line(change))],
        )

    def _remembered(self) -> str | None:
        """The remembered decision for edits, if any (an unreadable store counts as none)."""
        if self.session_always is not None:
            return self.session_always
        if self.store is None:
            return None
        try:
            rule = self.store.decide(EDIT_RULE, {})
        except Exception as exc:  # noqa: BLE001 - the store must never break a run
            log.warning("reading remembered permissions failed: %s", exc)
            return None
        return rule.decision if rule is not None else None

    def _remember(self, decision: str) -> None:
        """Keep an "always" answer in the store (for this session only when the store cannot be written)."""
        self.session_always = decision
        if self.store is None:
            return
        try:
            self.store.remember(rule_for(EDIT_RULE, {}, decision))
        except OSError as exc:
            log.warning("could not save the edit permission: %s", exc)


def diff_content(path: str, change: FileChange) -> Any:
    """ACP `diff` content of a change (a deletion shows the whole old text going away)."""
    return helpers.tool_diff_content(path, change.new_text or "", change.base_text)


def first_changed_line(change: FileChange) -> int:
    """The 1-based line where old and new text first differ (1 for creations and deletions)."""
    old = (change.base_text or "").splitlines()
    new = (change.new_text or "").splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return number
    return min(len(old), len(new)) + 1 if old and new else 1
