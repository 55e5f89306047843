"""Remembered permission answers ("Allow always", "Reject always"), per workspace, shared by every front-end.

One small JSON file per workspace under the user's config dir (`<config>/lsp-agent/permissions/<key>.json`,
key = a digest of the workspace path), so the language server, the CLI and the ACP front-end read and write the
same rules:

    {"version": 1, "workspace": "/abs/path",
     "rules": [{"tool": "run_tests", "decision": "allow", "created": "2026-11-23T23:59:00+00:00"},
               {"tool": "run_command", "prefix": ["pytest", "-q"], "decision": "allow", "created": "..."}]}

A rule covers a whole tool, or for run_command the commands whose argv starts with `prefix` (allowing
`pytest -q` allows `pytest -q tests/x`, never `rm`). When rules disagree, a deny wins.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

VERSION = 1
PREFIX_TOOLS = ("run_command",)  # tools whose rules are per command prefix
DECISIONS = ("allow", "deny")
# An argv word from here on is an operand (a path, a glob, an option value): the remembered prefix stops before it.
_OPERAND = re.compile(r"[/\\*?~$`|;&<>=]|^\.")


@dataclass(frozen=True)
class Rule:
    """One remembered answer: a tool (and for run_command an argv prefix) allowed or denied."""

    tool: str
    decision: str  # "allow" | "deny"
    prefix: tuple[str, ...] | None = None
    created: str = ""

    @property
    def key(self) -> str:
        """How the user names the rule: "run_tests" or "run_command: pytest -q"."""
        return self.tool if self.prefix is None else f"{self.tool}: {' '.join(self.prefix)}"

    def covers(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """True when this rule decides the call."""
        if tool != self.tool:
            return False
        if self.prefix is None:
            return True
        argv = command_argv(arguments)
        return argv is not None and tuple(argv[: len(self.prefix)]) == self.prefix

    def to_dict(self) -> dict[str, Any]:
        """JSON form (also what `list` returns)."""
        out: dict[str, Any] = {"tool": self.tool, "decision": self.decision, "key": self.key}
        if self.prefix is not None:
            out["prefix"] = list(self.prefix)
        if self.created:
            out["created"] = self.created
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Rule | None:
        """A rule read from the file; None for a damaged entry."""
        if not isinstance(data, dict):
            return None
        tool, decision, prefix = data.get("tool"), data.get("decision"), data.get("prefix")
        if not isinstance(tool, str) or not tool or decision not in DECISIONS:
            return None
        if prefix is not None and not (
            isinstance(prefix, list) and prefix and all(isinstance(p, str) for p in prefix)
        ):
            return None
        created = data.get("created") if isinstance(data.get("created"), str) else ""
        return cls(tool, decision, tuple(prefix) if prefix is not None else None, created)


def command_argv(arguments: Mapping[str, Any]) -> list[str] | None:
    """run_command's argv (a list of strings), or None when the arguments do not have one."""
    argv = arguments.get("argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return argv
    return None


def command_prefix(argv: Sequence[str]) -> tuple[str, ...]:
    """The part of a command a remembered answer covers: the program and its words up to the first operand.

    `pytest -q tests/x` -> ("pytest", "-q"); `git status` -> ("git", "status"); `rm -rf build/` -> ("rm", "-rf").
    """
    words: list[str] = [argv[0]]
    for word in argv[1:]:
        if _OPERAND.search(word) or " " in word:
            break
        words.append(word)
    return tuple(words)


def rule_for(tool: str, arguments: Mapping[str, Any], decision: str) -> Rule:
    """The rule an "always" answer to this call creates."""
    prefix = None
    if tool in PREFIX_TOOLS:
        argv = command_argv(arguments)
        prefix = command_prefix(argv) if argv else None
    return Rule(tool, decision, prefix, datetime.now(UTC).isoformat(timespec="seconds"))


def decide(rules: Sequence[Rule], tool: str, arguments: Mapping[str, Any]) -> Rule | None:
    """The rule deciding a call: a matching deny wins over a matching allow; None when none matches."""
    matching = [r for r in rules if r.covers(tool, arguments)]
    return next((r for r in matching if r.decision == "deny"), matching[0] if matching else None)


def default_directory() -> Path:
    """Where the per-workspace files live: the user's config dir (XDG_CONFIG_HOME on Linux)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("lsp-agent")) / "permissions"


class PermissionStore:
    """The remembered rules of one workspace, read fresh on every call (other processes may change them)."""

    def __init__(self, workspace: Path, directory: Path | None = None) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.directory = directory if directory is not None else default_directory()

    @property
    def path(self) -> Path:
        """The workspace's JSON file."""
        digest = hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", self.workspace.name)[:40] or "root"
        return self.directory / f"{name}-{digest}.json"

    def rules(self) -> list[Rule]:
        """Every remembered rule (a missing or damaged file means none)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable permission file %s: %s", self.path, exc)
            return []
        entries = data.get("rules") if isinstance(data, dict) else None
        return [r for r in map(Rule.from_dict, entries or []) if r is not None]

    def decide(self, tool: str, arguments: Mapping[str, Any]) -> Rule | None:
        """The remembered rule deciding this call, if any."""
        return decide(self.rules(), tool, arguments)

    def remember(self, rule: Rule) -> None:
        """Add a rule (replacing one with the same key); OSError when the file cannot be written."""
        kept = [r for r in self.rules() if r.key != rule.key]
        self._write([*kept, rule])

    def revoke(self, key: str | None = None) -> list[Rule]:
        """Forget the rule named `key` ("tool" or "tool: prefix words"), or every rule when None; returns them."""
        rules = self.rules()
        wanted = " ".join(key.split()) if key is not None else None
        gone = [r for r in rules if wanted is None or " ".join(r.key.split()) == wanted]
        if gone:
            self._write([r for r in rules if r not in gone])
        return gone

    def _write(self, rules: list[Rule]) -> None:
        """Replace the file atomically (a reader never sees half of it)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {"version": VERSION, "workspace": str(self.workspace), "rules": [_stored(r) for r in rules]}
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        tmp.replace(self.path)


def _stored(rule: Rule) -> dict[str, Any]:
    """A rule as the file keeps it (the key is derived, not stored)."""
    out = rule.to_dict()
    out.pop("key")
    return out
