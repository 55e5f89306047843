"""Next edits' model request: the changed definition and its sites in, each site's replacement lines out.

One batched chat request per change. The reply is read strictly: a site whose block is missing, malformed, holds a
code fence, or leaves a Python file unparsable is dropped with a log line; the others stand.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from lsp_agent.index.edit_sites import EditSite
from lsp_agent.index.signatures import DefinitionChange
from lsp_agent.workspace.proposal import FileChange, Proposal, python_syntax_error

log = logging.getLogger(__name__)

SYSTEM = (
    "You update code after its author changed a definition. For every numbered site, reply with the site's "
    "lines rewritten so they fit the new definition, keeping their indentation and everything the change does "
    'not touch. Answer each site in exactly this form, and nothing else:\n<site id="N">\nthe rewritten lines\n'
    "</site>\nNo code fences, no explanations. A site that needs no change is repeated unchanged. A new "
    "required parameter gets the value the surrounding code makes obvious, else a clear placeholder name."
)
SITE_BLOCK = re.compile(r'<site id="(\d+)">\n(.*?)\n?</site>', re.DOTALL)
MAX_GROWTH_LINES = 10  # a replacement may add at most this many lines to its site


@dataclass(frozen=True)
class SiteEdit:
    """A site and the lines the model gave for it."""

    site: EditSite
    new_text: str


def build_messages(
    change: DefinitionChange,
    definition_path: str,
    sites: list[EditSite],
    redact: Callable[[str], str] = str,
) -> list[dict]:
    """The chat messages asking for every site's new lines (secret values in the definition redacted)."""
    blocks = "\n".join(
        f'<site id="{i}" path="{s.path}" lines="{s.start + 1}-{s.end}">\n{s.text.rstrip(chr(10))}\n</site>'
        for i, s in enumerate(sites, 1)
    )
    user = (
        f"In {definition_path}, {change.describe()}.\n\nBefore:\n{redact(change.before.header)}\n\n"
        f"After:\n{redact(change.after.header)}\n\nSites to update ({len(sites)}):\n{blocks}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_reply(reply: str, sites: list[EditSite], note: Callable[[str], None] = log.info) -> list[SiteEdit]:
    """The well-formed site blocks of a reply; each malformed or missing one is reported through `note`."""
    found: dict[int, str] = {}
    for match in SITE_BLOCK.finditer(reply or ""):
        number, body = int(match.group(1)), match.group(2)
        if not 1 <= number <= len(sites) or number in found:
            note(f"next edits: reply block for site {number} ignored (unknown or repeated)")
            continue
        found[number] = body
    edits: list[SiteEdit] = []
    for number, site in enumerate(sites, 1):
        body = found.get(number)
        where = f"{site.path}:{site.start + 1}"
        if body is None:
            note(
                f"next edits: the model's reply has no well-formed block for site {number} ({where}): dropped"
            )
            continue
        problem = _problem(site, body)
        if problem:
            note(f"next edits: site {number} ({where}) dropped: {problem}")
            continue
        new_text = body + ("\n" if site.text.endswith("\n") else "")
        if new_text != site.text:
            edits.append(SiteEdit(site, new_text))
    return edits


def _problem(site: EditSite, body: str) -> str | None:
    """Why a site's replacement cannot be used (None when it can)."""
    if "```" in body:
        return "the replacement holds a code fence"
    if not body.strip():
        return "the replacement is empty"
    if body.count("\n") + 1 > (site.end - site.start) + MAX_GROWTH_LINES:
        return "the replacement is much longer than the site"
    if "<site" in body or "</site" in body:
        return "the replacement holds a site tag"
    return None


def build_proposal(edits: list[SiteEdit], texts: dict[str, str], summary: str) -> tuple[Proposal, int]:
    """A proposal replacing each site's lines in the texts the sites were read from; (proposal, sites kept).

    A site whose replacement leaves a Python file that parsed unparsable is left out (logged).
    """
    by_path: dict[str, list[SiteEdit]] = {}
    for edit in edits:
        by_path.setdefault(edit.site.path, []).append(edit)
    changes: list[FileChange] = []
    kept = 0
    for path, file_edits in sorted(by_path.items()):
        base = texts[path]
        lines = base.splitlines(keepends=True)
        good = [e for e in file_edits if _parses_with(path, base, lines, e)]
        for edit in sorted(good, key=lambda e: e.site.start, reverse=True):
            lines[edit.site.start : edit.site.end] = [edit.new_text]
        if good:
            kept += len(good)
            changes.append(FileChange(path, "modify", base, "".join(lines)))
    return Proposal(changes, summary), kept


def _parses_with(path: str, base: str, lines: list[str], edit: SiteEdit) -> bool:
    """False (logged) when a Python file that parsed no longer does with this one replacement."""
    if not path.endswith((".py", ".pyi")) or python_syntax_error(path, base) is not None:
        return True
    text = "".join(lines[: edit.site.start]) + edit.new_text + "".join(lines[edit.site.end :])
    error = python_syntax_error(path, text)
    if error is not None:
        log.info(
            "next edits: site %s:%d dropped: its replacement breaks the syntax (%s)",
            path,
            edit.site.start + 1,
            error,
        )
    return error is None
