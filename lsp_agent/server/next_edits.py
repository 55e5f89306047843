"""Next edits: after the user changes a definition, a pending proposal that updates the sites the change implies.

The definitions of each open document are remembered; after a pause in typing (or at save) they are compared with
the new text. A changed signature, constructor or attribute name finds its sites through the index, the model
rewrites them in one request, and the result waits as an ordinary pending proposal (hints, per-hunk apply and
reject, rebase) with an "Update N call sites of `f`" code action at the definition. Nothing is written until the
user applies it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_agent.server.proposals import PendingProposal

if TYPE_CHECKING:
    from lsp_agent.index.edit_sites import EditSite
    from lsp_agent.index.signatures import Definition, DefinitionChange
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

CHECK_DELAY = 1.0  # seconds of quiet after a change before the definitions are compared
RUN_PREFIX = "next-edit-"


@dataclass
class NextEditOffer:
    """A pending next-edit proposal: which definition it follows and what its code action says."""

    run_id: str
    key: tuple[str, str, str]  # (uri, qualified name, change kind): one offer per definition and kind
    title: str
    changes: int = 0  # the proposal's hunks when offered (fewer: some were applied or rejected one by one)

    @property
    def uri(self) -> str:
        """The document of the changed definition."""
        return self.key[0]

    @property
    def qualified_name(self) -> str:
        """The changed definition."""
        return self.key[1]

    def current_title(self, pending: PendingProposal) -> str:
        """The title, saying how much is left once single hunks were applied or rejected."""
        left = sum(len(f.hunks) or 1 for f in pending.files)
        return self.title if left >= self.changes else f"{self.title} ({left} of {self.changes} changes left)"


class NextEdits:
    """Watches open documents' definitions and turns their changes into pending proposals."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.baselines: dict[str, dict[str, Definition]] = {}
        self.offers: dict[str, NextEditOffer] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self._count = 0
        self._latest: dict[tuple[str, str, str], int] = {}  # offer key -> the newest request's number
        # offer key -> the definition before the first change not yet settled: a later edit of it is diffed
        # from there (`parse(text, s)` then `parse(text, sep)` is one change); kept while a request is in
        # flight or its offer is pending
        self._origins: dict[tuple[str, str, str], Definition] = {}
        self._in_flight: set[tuple[str, str, str]] = set()

    def active(self) -> bool:
        """On when the `nextEdits` setting is and a model is configured."""
        settings = self.server.settings
        return bool(settings.next_edits and settings.model)

    # ----- document events --------------------------------------------------------------------------------

    def opened(self, uri: str, text: str) -> None:
        """Remember the definitions of a newly opened document (of the text it opened with)."""
        self.baselines.pop(uri, None)
        self._spawn(self.check(uri, text))

    def changed(self, uri: str) -> None:
        """Compare the definitions once typing pauses."""
        if not self.active():
            return
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(CHECK_DELAY, lambda: self._spawn(self.check(uri)))

    def saved(self, uri: str) -> None:
        """Compare the definitions now."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._spawn(self.check(uri))

    def closed(self, uri: str) -> None:
        """Forget a closed document's definitions (its pending proposals stay)."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.baselines.pop(uri, None)

    def _spawn(self, coro: object) -> None:
        task = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ----- comparing and proposing ------------------------------------------------------------------------

    def _where(self, uri: str) -> tuple[Path, str] | None:
        """(folder root, workspace-relative path) of a document inside a workspace folder."""
        fs_path = to_fs_path(uri)
        folder = self.server.indexes.folder_for(Path(fs_path).absolute()) if fs_path else None
        if folder is None or fs_path is None:
            return None
        return folder.root, Path(fs_path).absolute().relative_to(folder.root).as_posix()

    async def check(self, uri: str, text: str | None = None) -> None:
        """Diff the document's definitions (of `text`, else its current text) against the remembered ones;
        propose for each change."""
        try:  # a document opened while `initialized` reads the settings waits for them
            await asyncio.wait_for(self.server.settings_ready.wait(), 10)
        except TimeoutError:
            return
        doc = self.server.workspace.text_documents.get(uri)
        where = self._where(uri)
        if doc is None or where is None or not self.active():
            return
        root, rel = where
        from lsp_agent.workspace.secrets import secret_files_of

        if secret_files_of(self.server.settings).is_secret(rel):
            self.baselines.pop(uri, None)
            return  # a secret file's definitions, and its name, never reach a model
        text = doc.source if text is None else text
        from lsp_agent.index.signatures import definitions, diff_definitions

        try:
            after = await asyncio.to_thread(definitions, rel, text)
        except Exception:
            log.exception("next edits: reading the definitions of %s failed", rel)
            return
        before = self.baselines.get(uri)
        self.baselines[uri] = after
        if before is None:
            return
        moved = {q: d for q, d in after.items() if q in before and _shape(before[q]) != _shape(d)}
        if not moved:
            return  # no definition's shape changed since the last look (typing in a body, lines moving)
        self._forget_settled()
        changes = []
        for kind in ("call", "attribute"):
            origins = {k[1]: d for k, d in self._origins.items() if k[0] == uri and k[2] == kind}
            found = [c for c in diff_definitions({**before, **origins}, moved) if c.kind == kind]
            for qname in set(origins) & set(moved) - {c.after.qualified_name for c in found}:
                self._cancel((uri, qname, kind))  # back to its original shape: nothing to propose
            changes += found
        for change in changes:
            self._spawn(self.propose(uri, root, rel, text, change))

    async def propose(self, uri: str, root: Path, rel: str, text: str, change: DefinitionChange) -> None:
        """Find the change's sites, have the model rewrite them, and keep the result as a pending proposal."""
        try:
            await self._propose(uri, root, rel, text, change)
        except Exception:  # a failed next edit must never take the server down
            log.exception("next edits for %s failed", change.after.qualified_name)

    async def _propose(self, uri: str, root: Path, rel: str, text: str, change: DefinitionChange) -> None:
        key = (uri, change.after.qualified_name, change.kind)
        self._count += 1
        self._latest[key] = generation = self._count
        self._origins.setdefault(key, change.before)
        self._withdraw(key)
        self._in_flight.add(key)
        try:
            await self._ask(key, generation, root, rel, text, change)
        finally:
            if self._latest.get(key) == generation:
                self._in_flight.discard(key)

    async def _ask(
        self,
        key: tuple[str, str, str],
        generation: int,
        root: Path,
        rel: str,
        text: str,
        change: DefinitionChange,
    ) -> None:
        """Sites, one model request, and the pending proposal (unless a newer request for `key` started)."""
        sites, texts = await self._sites(root, rel, text, change)
        if not sites:
            log.info("next edits: %s: no site needs an update", change.describe())
            return
        sites = self._shareable(root, sites)
        if not sites:
            return
        limit = self.server.settings.next_edits_max_sites
        if len(sites) > limit:
            self.server.log_line(
                f"next edits: {len(sites)} sites for {change.callee}; only the first {limit} asked"
            )
            sites = sites[:limit]
        from lsp_agent.agent.model.client import ModelClient, ModelError
        from lsp_agent.server.next_edit_model import build_messages, build_proposal, parse_reply
        from lsp_agent.workspace.redaction import redactor_for

        try:
            client = ModelClient(self.server.settings, max_retries=1, stream=False)
            redact = redactor_for(self.server.settings, root).redact
            reply = await client.complete(build_messages(change, rel, sites, redact))
        except ModelError as exc:
            self.server.log_line(f"next edits: the model failed ({exc})", types.MessageType.Warning)
            return
        edits = parse_reply(
            reply.content, sites, lambda m: self.server.log_line(m, types.MessageType.Warning)
        )
        proposal, kept = await asyncio.to_thread(build_proposal, edits, texts, "")  # parses the edited files
        if not proposal.changes:
            self.server.log_line(f"next edits: {change.describe()}: no usable site in the model's reply")
            return
        if self._latest.get(key) != generation:
            return  # the definition changed again meanwhile: the newer request's proposal is the one to keep
        title = _title(change, kept)
        proposal.summary = title
        run_id = f"{RUN_PREFIX}{generation}"
        pending = PendingProposal.create(run_id, root, proposal)
        hunks = sum(len(f.hunks) or 1 for f in pending.files)
        self.offers[run_id] = NextEditOffer(run_id, key, title, hunks)
        self.server.proposals.add(pending)
        self.server.log_line(f"[{run_id}] {title} ({change.describe()})")
        self.server.publish_hints()

    async def _sites(
        self, root: Path, rel: str, text: str, change: DefinitionChange
    ) -> tuple[list[EditSite], dict[str, str]]:
        """The change's sites and the texts they were read from (open buffers first, else the disk)."""
        from lsp_agent.index.edit_sites import find_sites
        from lsp_agent.workspace.proposal import read_disk_text

        buffers: dict[str, str] = {}
        for path, buffer in self.server.open_buffers():
            if path == root or root in path.parents:
                buffers[path.relative_to(root).as_posix()] = buffer
        texts: dict[str, str] = {rel: text}

        def read(path: str) -> str | None:
            try:
                found = buffers.get(path) or read_disk_text(root / path)
            except (OSError, ValueError):
                return None
            if found is not None:
                texts[path] = found
            return found

        index = self.server.indexes.index_for(root)
        sites = await asyncio.to_thread(find_sites, index, change, read, (rel, text))
        return sites, texts

    def _shareable(self, root: Path, sites: list[EditSite]) -> list[EditSite]:
        """The sites that may go to the model: none in a secret file, none holding a secret value (redacting it
        would have the model write the marker back into the file)."""
        from lsp_agent.workspace.redaction import redactor_for
        from lsp_agent.workspace.secrets import secret_files_of

        redact = redactor_for(self.server.settings, root).redact
        secret = secret_files_of(self.server.settings).is_secret
        kept = [s for s in sites if not secret(s.path) and redact(s.text) == s.text]
        if len(kept) < len(sites):
            self.server.log_line(
                f"next edits: {len(sites) - len(kept)} site(s) left out: secret file or value"
            )
        return kept

    def _withdraw(self, key: tuple[str, str, str]) -> None:
        """Drop an earlier offer for the same definition and kind (the newer change supersedes it)."""
        for run_id, offer in list(self.offers.items()):
            if offer.key == key:
                del self.offers[run_id]
                if self.server.proposals.remove(run_id) is not None:
                    self.server.publish_hints(reconcile=False)

    def _cancel(self, key: tuple[str, str, str]) -> None:
        """The definition is back as it was: drop its offer, forget its origin, ignore a request in flight."""
        self._withdraw(key)
        self._origins.pop(key, None)
        self._in_flight.discard(key)
        self._count += 1
        self._latest[key] = self._count

    def _forget_settled(self) -> None:
        """Forget the origins of changes whose offer was applied or rejected (or never came)."""
        pending = {o.key for o in self.offers.values() if self.server.proposals.get(o.run_id) is not None}
        for key in list(self._origins):
            if key not in pending and key not in self._in_flight:
                del self._origins[key]

    # ----- code actions -----------------------------------------------------------------------------------

    def live_offers(self, uri: str, line: int) -> list[tuple[NextEditOffer, PendingProposal]]:
        """The pending offers whose definition holds `line` (0-based) of `uri`."""
        out = []
        for run_id, offer in list(self.offers.items()):
            pending = self.server.proposals.get(run_id)
            if pending is None:
                del self.offers[run_id]  # applied or rejected in full
                continue
            definition = self.baselines.get(uri, {}).get(offer.qualified_name)
            if (
                offer.uri == uri
                and definition is not None
                and definition.line - 1 <= line < definition.end_line
            ):
                out.append((offer, pending))
        return out


def _shape(definition: Definition) -> tuple:
    """What callers see of a definition (not where it is)."""
    return definition.kind, definition.params, definition.attributes


def _title(change: DefinitionChange, count: int) -> str:
    """'Update 3 call sites of `parse`' / 'Update 1 use of `height`'."""
    if change.kind == "attribute":
        old, new = change.renamed[0]
        return f"Rename {count} use{'s' if count != 1 else ''} of `{old}` to `{new}`"
    what = "construction" if change.after.kind == "class" else "call site"
    return f"Update {count} {what}{'s' if count != 1 else ''} of `{change.callee}`"
