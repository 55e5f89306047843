"""The other versions of a line that pass the tests, offered on the proposal's changed line.

When a line repair finds several versions of a line that pass the tests (agent/repair/line_alternatives.py), the run's
`context` event (`what: "alternatives"`) names them. The proposal's hunk holding that line gets one code action per
other version ("Use alternative: `...`"), a bare Command running `lspAgent.useAlternative`, which puts the version in
the proposal in place of the one chosen: the proposal's text and hunks are recomputed, the hunk is checked against
the user's current text (a line the user edited meanwhile refuses it), the hints are republished and the editor
hears an `alternative` event with the new summary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from lsp_agent.server.command_args import CommandError
from lsp_agent.server.proposals import HunkSpot, PendingProposal, _reset

if TYPE_CHECKING:
    from lsp_agent.server.edits import FileProposal
    from lsp_agent.server.server import AgentServer

USE_ALTERNATIVE = "lspAgent.useAlternative"
MAX_TITLE_CODE = 70  # characters of a version shown in an action's title


@dataclass
class LineAlternatives:
    """The passing versions of one line of a proposal: `current` is in the proposal at `line`, `versions` all
    passed the same tests (the smallest change first)."""

    path: str  # workspace-relative, as in the proposal
    line: int  # 1-based line of the proposal's new text where `current` starts
    versions: list[str]
    current: str
    summary: str = ""  # the proposal's summary as the run wrote it

    def others(self) -> list[str]:
        """The versions the user can switch to."""
        return [v for v in self.versions if v != self.current]


def _error(message: str) -> Exception:
    """A CommandError: the message the editor shows."""
    return CommandError(message)


def alternatives_from_event(data: dict[str, Any]) -> LineAlternatives | None:
    """The alternatives a run's `context` event names, or None when it names no line or fewer than 2 versions."""
    versions, path, line = data.get("versions"), data.get("path"), data.get("line")
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions) or len(versions) < 2:
        return None
    if not isinstance(path, str) or not isinstance(line, int) or line < 1:
        return None
    return LineAlternatives(path, line, list(versions), versions[0])


def attach(pending: PendingProposal, found: list[LineAlternatives]) -> None:
    """Keep the alternatives whose chosen version the proposal holds at their line."""
    for alternatives in found:
        fp = next((f for f in pending.files if f.change.path == alternatives.path), None)
        if fp is not None and _holds(fp, alternatives):
            alternatives.summary = pending.proposal.summary
            pending.alternatives.append(alternatives)


def _lines(fp: FileProposal) -> list[str]:
    """The proposal's new text of a file as lines (without line endings)."""
    return (fp.change.new_text or "").splitlines()


def _holds(fp: FileProposal, alternatives: LineAlternatives) -> bool:
    """True when the proposal's new text has `current` at the alternatives' line."""
    wanted = alternatives.current.splitlines()
    start = alternatives.line - 1
    return fp.change.kind == "modify" and _lines(fp)[start : start + len(wanted)] == wanted


def _hunk_index(fp: FileProposal, line: int) -> int | None:
    """The index of the hunk whose new lines hold the proposal's 1-based `line`, or None."""
    shift = 0
    for index, hunk in enumerate(fp.hunks):
        start = hunk.start + shift
        if start <= line - 1 < start + len(hunk.new_lines):
            return index
        shift += len(hunk.new_lines) - (hunk.end - hunk.start)
    return None


def alternative_actions(spot: HunkSpot) -> list[types.Command]:
    """ "Use alternative: `...`" for each other passing version of a line in this spot's hunk."""
    actions: list[types.Command] = []
    for alternatives in spot.pending.alternatives:
        if alternatives.path != spot.file.change.path or spot.index < 0:
            continue
        if _hunk_index(spot.file, alternatives.line) != spot.index:
            continue
        for version in alternatives.others():
            code = " ".join(version.split())
            code = code if len(code) <= MAX_TITLE_CODE else code[: MAX_TITLE_CODE - 3] + "..."
            arguments = {"runId": spot.pending.run_id, "uri": spot.file.uri, "line": alternatives.line}
            actions.append(
                types.Command(
                    title=f"Use alternative: `{code}` (it passes the tests too)",
                    command=USE_ALTERNATIVE,
                    arguments=[{**arguments, "version": version}],
                )
            )
    return actions


def use_alternative(server: AgentServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """lspAgent.useAlternative {runId, uri, line, version}: the proposal takes another passing version of a line."""
    usage = '{"runId": str, "uri": str, "line": int, "version": str}'
    arg = args[0] if args and isinstance(args[0], dict) else None
    if arg is None or not all(isinstance(arg.get(k), str) for k in ("runId", "uri", "version")):
        raise _error(f"{USE_ALTERNATIVE}: expected {usage}")
    pending = server.proposals.get(arg["runId"])
    if pending is None:
        raise _error(f"{USE_ALTERNATIVE}: run {arg['runId']!r} has no pending edits")
    fp = pending.by_uri(arg["uri"])
    alternatives = next(
        (
            a
            for a in pending.alternatives
            if fp is not None and a.path == fp.change.path and a.line == arg.get("line")
        ),
        None,
    )
    if fp is None or alternatives is None:
        raise _error(f"{USE_ALTERNATIVE}: run {pending.run_id} offers no alternatives at that line")
    version = arg["version"]
    if version not in alternatives.others():
        raise _error(f"{USE_ALTERNATIVE}: {version.strip()!r} is not another version that passed the tests")
    if not _holds(fp, alternatives):
        raise _error(f"{USE_ALTERNATIVE}: the proposal no longer holds the line it chose (applied already?)")
    previous = alternatives.current
    _switch(server, pending, fp, alternatives, version)
    summary = pending.proposal.summary
    payload = {
        "runId": pending.run_id,
        "kind": "alternative",
        "path": fp.change.path,
        "line": alternatives.line,
    }
    payload.update(version=version, previous=previous, summary=summary)
    server.protocol.notify("lspAgent/event", payload)
    server.log_line(
        f"[run {pending.run_id}] alternative: {fp.change.path} line {alternatives.line} is now "
        f"`{version.strip()}` (was `{previous.strip()}`)"
    )
    server.publish_hints()
    return {**payload, "state": pending.state, "files": [f.change.path for f in pending.files]}


def _with_version(text: str, line: int, previous: str, version: str) -> str:
    """`text` with the lines of `previous` at 1-based `line` replaced by `version` (line endings kept)."""
    lines = text.splitlines(keepends=True)
    start, count = line - 1, len(previous.splitlines())
    last = lines[start + count - 1]
    ending = last[len(last.rstrip("\r\n")) :] or "\n"
    return "".join(lines[:start] + [part + ending for part in version.splitlines()] + lines[start + count :])


def _switch(
    server: AgentServer,
    pending: PendingProposal,
    fp: FileProposal,
    alternatives: LineAlternatives,
    version: str,
) -> None:
    """Put `version` in the proposal in place of the current one; undone when its hunk no longer applies."""
    old_change, previous, line = fp.change, alternatives.current, alternatives.line
    _reset(
        fp,
        dataclasses.replace(
            old_change, new_text=_with_version(old_change.new_text or "", line, previous, version)
        ),
    )
    index = _hunk_index(fp, line)
    current = server.document_state(fp.abspath).text
    if index is None or (
        current is not None and any(r.hunk is fp.hunks[index] for r in fp.rebased(current)[1])
    ):
        _reset(fp, old_change)
        raise _error(
            f"{USE_ALTERNATIVE}: the changed line no longer applies to {fp.change.path} as it is now "
            "(edited since the run?)"
        )
    alternatives.current = version
    proposal = pending.proposal
    changes = [
        dataclasses.replace(c, new_text=_with_version(c.new_text or "", line, previous, version))
        if c.path == fp.change.path and c.new_text is not None
        else c
        for c in proposal.changes
    ]
    summary = alternatives.summary
    if version != alternatives.versions[0]:
        summary = (
            f"Using `{version.strip()}` at {fp.change.path} line {line} instead of `{alternatives.versions[0].strip()}`"
            f" (chosen in the editor; it passes the tests too). {summary}"
        )
    pending.proposal = dataclasses.replace(proposal, changes=changes, summary=summary)


ALTERNATIVE_COMMANDS = {USE_ALTERNATIVE: use_alternative}
