"""Project rules: AGENTS.md at the workspace root and `.lsp-agent/rules.md` join the agent's system prompt.

Each file is capped (MAX_RULES_BYTES); a file that is too large, binary, not UTF-8, secret or a symlink leading
out of the workspace is left out with a message saying why and what to do, and changes nothing else. Secret
values in the rules are redacted like every other text the model sees.
"""

from __future__ import annotations

import logging
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsp_agent.workspace.paths import PathError, resolve_in_workspace

if TYPE_CHECKING:
    from lsp_agent.agent.events import RunEvents

log = logging.getLogger(__name__)

RULE_FILES = ("AGENTS.md", ".lsp-agent/rules.md")
MAX_RULES_BYTES = 32_000  # per file: about 8,000 tokens of the system prompt


class RulesTarget(Protocol):
    """What the rules join: a run's workspace, settings, the system prompt's extra text and its events."""

    root: Path
    settings: Any
    prompt_extra: str
    events: RunEvents


@dataclass
class ProjectRules:
    """The rules text for the system prompt, the files it came from and the files left out (with why)."""

    text: str = ""
    loaded: list[dict[str, Any]] = field(default_factory=list)  # {"path", "bytes"}
    problems: list[str] = field(default_factory=list)

    def status_line(self) -> str:
        """One line for the CLI, the editor's log and lspAgent.status."""
        if self.loaded:
            files = ", ".join(f"{r['path']} ({_size(r['bytes'])})" for r in self.loaded)
            line = f"project rules: loaded {files}"
        else:
            line = f"project rules: none loaded (looked for {' and '.join(RULE_FILES)})"
        return line + "".join(f"; {p}" for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the `context` event and lspAgent.status)."""
        return {"loaded": list(self.loaded), "problems": list(self.problems), "status": self.status_line()}


def load_rules(root: Path, settings: object | None = None) -> ProjectRules:
    """The project rules of a workspace root (never raises: problems are reported in the result)."""
    from lsp_agent.workspace.redaction import redactor_for
    from lsp_agent.workspace.secrets import secret_files_of

    rules = ProjectRules()
    secrets = secret_files_of(settings)
    parts = []
    for rel in RULE_FILES:
        text = _read_rules_file(root, rel, secrets.is_secret, rules.problems)
        if text is None or not text.strip():
            continue
        rules.loaded.append({"path": rel, "bytes": len(text.encode("utf-8"))})
        parts.append(f"## {rel}\n{text.strip()}")
    if parts:
        body = redactor_for(settings, root).redact("\n\n".join(parts))
        rules.text = (
            "Project rules (from the workspace's own instructions; follow them unless the user's task says "
            "otherwise):\n\n" + body
        )
    return rules


def _read_rules_file(root: Path, rel: str, is_secret: Any, problems: list[str]) -> str | None:
    """One rules file's text, or None (absent, or refused with a problem message)."""
    candidate = Path(root) / rel
    if not candidate.exists() and not candidate.is_symlink():
        return None
    try:
        path = resolve_in_workspace(root, rel)
        st = path.stat()
    except PathError as exc:
        problems.append(f"{rel} not loaded: {exc}")
        return None
    except OSError as exc:
        problems.append(f"{rel} not loaded: {exc.strerror or exc}")
        return None
    if is_secret(rel):
        problems.append(
            f"{rel} not loaded: it matches secretFiles, so its contents are never shown to the model"
        )
        return None
    if not stat.S_ISREG(st.st_mode):
        problems.append(f"{rel} not loaded: not a regular file")
        return None
    if st.st_size > MAX_RULES_BYTES:
        problems.append(
            f"{rel} not loaded: {_size(st.st_size)} is over the {_size(MAX_RULES_BYTES)} limit for project rules; "
            "shorten it (keep the rules, link to longer documents the agent can read)"
        )
        return None
    try:
        data = path.read_bytes()[: MAX_RULES_BYTES + 1]
    except OSError as exc:
        problems.append(f"{rel} not loaded: {exc.strerror or exc}")
        return None
    if b"\0" in data:
        problems.append(f"{rel} not loaded: it is a binary file, not Markdown text")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(f"{rel} not loaded: not UTF-8 text; save it as UTF-8")
        return None


def rules_status(roots: list[Path], settings: Any) -> list[dict[str, Any]]:
    """lspAgent.status "rules": per workspace folder, the rules files loaded and the ones left out (and why)."""
    return [{"folder": str(root), **load_rules(root, settings).to_dict()} for root in roots]


def apply_project_rules(run: RulesTarget) -> ProjectRules:
    """Load the rules of the run's workspace into its system prompt and report them as a `context` event."""
    rules = load_rules(run.root, run.settings)
    if rules.text:
        run.prompt_extra = rules.text + (f"\n\n{run.prompt_extra}" if run.prompt_extra else "")
    if not rules.loaded and not rules.problems:
        return rules  # nothing to say: no rules files in this workspace
    log.info("%s", rules.status_line())
    run.events.emit("context", what="rules", **rules.to_dict())
    return rules


def _size(n: int) -> str:
    """A byte count for people."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"
