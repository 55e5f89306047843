"""Who may run tools that execute code or reach outside the workspace, and remembering the answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# (tool name, arguments, reason) -> "once" | "session" | "deny"
PermissionAsker = Callable[[str, dict, str], Awaitable[str]]

log = logging.getLogger(__name__)

GUARDED = ("exec", "external")
ANSWERS = ("once", "session", "deny")


@dataclass
class Decision:
    """The outcome of a permission check and why."""

    allowed: bool
    source: str  # "not needed" | "settings" | "session" | "asked" | "no asker"
    answer: str = ""


@dataclass
class PermissionGate:
    """Checks guarded tools: settings first, then the run's session grants, then the asker (none = deny)."""

    settings_rules: Mapping[str, str] = field(default_factory=dict)
    asker: PermissionAsker | None = None
    session_grants: set[str] = field(default_factory=set)

    async def check(self, tool: str, permission: str, arguments: dict[str, Any]) -> Decision:
        """Decide whether `tool` may run with these arguments."""
        if permission not in GUARDED:
            return Decision(True, "not needed")
        rule = self.settings_rules.get(tool)
        if rule in ("allow", "deny"):
            return Decision(rule == "allow", "settings", rule)
        if tool in self.session_grants:
            return Decision(True, "session", "session")
        if self.asker is None:
            return Decision(False, "no asker", "deny")
        reason = "runs code on your machine" if permission == "exec" else "reaches outside the workspace"
        try:
            answer = await self.asker(tool, dict(arguments), reason)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken asker means no permission
            log.warning("permission asker failed for %s: %s", tool, exc)
            return Decision(False, "asked", "deny")
        answer = answer if answer in ANSWERS else "deny"
        if answer == "session":
            self.session_grants.add(tool)
        return Decision(answer != "deny", "asked", answer)


def denial_message(tool: str, permission: str, decision: Decision) -> str:
    """The observation the model reads when a guarded tool was refused."""
    kind = "execute code" if permission == "exec" else "reach outside the workspace"
    if decision.source == "settings":
        why = "the permissions setting denies it"
    elif decision.source == "no asker":
        why = (
            "nobody is available to approve it (run `lsp-agent ask` with --allow-exec, or add the tool to the "
            "permissions setting)"
        )
    else:
        why = "the user declined"
    return f"Permission denied: {tool} would {kind} and {why}. Continue without it, or finish with what you have."
