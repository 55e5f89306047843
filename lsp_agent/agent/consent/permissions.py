"""Who may run tools that execute code or reach outside the workspace, and remembering the answers.

Order of checks: the settings' `permissions` rules, then the workspace's remembered "always" answers
(permission_store.py), then this session's answers, then the asker. The asker answers with one of the four options
ACP and the editors know: allow_once, allow_always, reject_once, reject_always.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.agent.consent.store import PermissionStore, Rule, decide, rule_for

# (tool name, arguments, reason) -> one of ANSWERS
PermissionAsker = Callable[[str, dict, str], Awaitable[str]]

log = logging.getLogger(__name__)

GUARDED = ("exec", "external")
ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)
ANSWERS = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS)
ALLOW_SESSION = "session"  # allowed for the rest of the session, not remembered (`ask --allow-exec`)
# Older answer names, still accepted from askers.
LEGACY_ANSWERS = {"once": ALLOW_ONCE, "deny": "dismissed"}


@dataclass
class SessionPermissions:
    """Answers that hold for the rest of one session: "reject once" (not asked again) and session grants."""

    rules: list[Rule] = field(default_factory=list)

    def decide(self, tool: str, arguments: Mapping[str, Any]) -> Rule | None:
        """The session answer deciding this call, if any."""
        return decide(self.rules, tool, arguments)

    def remember(self, tool: str, arguments: Mapping[str, Any], decision: str) -> None:
        """Keep an answer for the session (per tool, per command prefix for run_command)."""
        rule = rule_for(tool, arguments, decision)
        self.rules = [r for r in self.rules if r.key != rule.key] + [rule]


@dataclass
class Decision:
    """The outcome of a permission check and why."""

    allowed: bool
    source: str  # "not needed" | "settings" | "remembered" | "session" | "asked" | "no asker"
    answer: str = ""
    note: str = ""  # e.g. why an "always" answer could not be saved


@dataclass
class PermissionGate:
    """Checks guarded tools: settings, remembered answers, the session's answers, then the asker (none = deny)."""

    settings_rules: Mapping[str, str] = field(default_factory=dict)
    asker: PermissionAsker | None = None
    session: SessionPermissions = field(default_factory=SessionPermissions)
    store: PermissionStore | None = None

    async def check(self, tool: str, permission: str, arguments: dict[str, Any]) -> Decision:
        """Decide whether `tool` may run with these arguments."""
        if permission not in GUARDED:
            return Decision(True, "not needed")
        rule = self.settings_rules.get(tool)
        if rule in ("allow", "deny"):
            return Decision(rule == "allow", "settings", rule)
        remembered = self._remembered(tool, arguments)
        if remembered is not None:
            answer = ALLOW_ALWAYS if remembered.decision == "allow" else REJECT_ALWAYS
            return Decision(remembered.decision == "allow", "remembered", answer, remembered.key)
        earlier = self.session.decide(tool, arguments)
        if earlier is not None:
            answer = ALLOW_SESSION if earlier.decision == "allow" else REJECT_ONCE
            return Decision(earlier.decision == "allow", "session", answer, earlier.key)
        if self.asker is None:
            return Decision(False, "no asker", REJECT_ONCE)
        reason = "runs code on your machine" if permission == "exec" else "reaches outside the workspace"
        try:
            answer = await self.asker(tool, dict(arguments), reason)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken asker means no permission
            log.warning("permission asker failed for %s: %s", tool, exc)
            return Decision(False, "asked", "dismissed")
        return self._follow(tool, arguments, LEGACY_ANSWERS.get(answer, answer))

    def _remembered(self, tool: str, arguments: Mapping[str, Any]) -> Rule | None:
        """The workspace's remembered rule for this call (an unreadable store counts as none)."""
        if self.store is None:
            return None
        try:
            return self.store.decide(tool, arguments)
        except Exception as exc:  # noqa: BLE001 - the store must never break a run
            log.warning("reading remembered permissions failed: %s", exc)
            return None

    def _follow(self, tool: str, arguments: Mapping[str, Any], answer: str) -> Decision:
        """Apply an answer: remember "always" in the store and "reject once"/session grants for the session."""
        if answer == ALLOW_SESSION:
            self.session.remember(tool, arguments, "allow")
            return Decision(True, "asked", answer)
        if (
            answer not in ANSWERS
        ):  # dismissed, timed out, or nonsense: denied this time, asked again next time
            return Decision(False, "asked", "dismissed")
        allowed = answer in (ALLOW_ONCE, ALLOW_ALWAYS)
        note = ""
        if answer == REJECT_ONCE:
            self.session.remember(tool, arguments, "deny")
        elif answer in (ALLOW_ALWAYS, REJECT_ALWAYS):
            rule = rule_for(tool, arguments, "allow" if allowed else "deny")
            self.session.remember(tool, arguments, rule.decision)
            note = rule.key
            if self.store is not None:
                try:
                    self.store.remember(rule)
                except OSError as exc:
                    note = f"{rule.key} (kept for this session only: {exc})"
                    log.warning("could not save the permission %s: %s", rule.key, exc)
        return Decision(allowed, "asked", answer, note)


def denial_message(tool: str, permission: str, decision: Decision) -> str:
    """The observation the model reads when a guarded tool was refused."""
    kind = "execute code" if permission == "exec" else "reach outside the workspace"
    if decision.source == "settings":
        why = "the permissions setting denies it"
    elif decision.source == "remembered":
        why = f"the user's saved permissions reject it ({decision.note})"
    elif decision.source == "session":
        why = "the user already declined it in this session"
    elif decision.source == "no asker":
        why = (
            "nobody is available to approve it (run `lsp-agent ask` with --allow-exec, or add the tool to the "
            "permissions setting)"
        )
    else:
        why = "the user declined"
    return f"Permission denied: {tool} would {kind} and {why}. Continue without it, or finish with what you have."
