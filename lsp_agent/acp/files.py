"""Files through the ACP client: fs/read_text_file (unsaved editor text wins), and edits written only with consent.

The run's tools execute in worker threads; they reach the client by scheduling its requests on the connection's
event loop and waiting for the answer. Bulk reads (searches) stay on disk: one round trip per file would make a
search over a large workspace crawl, and the client only matters for the files the agent actually reads or edits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.tools.registry import ToolError
from lsp_agent.workspace.applied import AppliedFile
from lsp_agent.workspace.apply_journal import record_apply
from lsp_agent.workspace.overlay import Overlay
from lsp_agent.workspace.proposal import FileChange, Proposal, read_disk_text

log = logging.getLogger(__name__)

CLIENT_TIMEOUT = 30.0  # one fs/* request
Consent = Callable[[FileChange], Awaitable[tuple[bool, str]]]


@dataclass
class ClientFiles:
    """The client's fs/* methods for one session (where the client offers them), with the disk as fallback."""

    conn: Any
    session_id: str
    loop: asyncio.AbstractEventLoop
    can_read: bool
    can_write: bool

    def read(self, path: Path) -> str | None:
        """The client's text of `path` (its unsaved buffer when open), else the disk's; None when missing."""
        if self.can_read and not self._on_loop():
            try:
                reply = self.call(self.conn.read_text_file(session_id=self.session_id, path=str(path)))
                return reply.content
            except Exception as exc:  # noqa: BLE001 - e.g. the file does not exist: the disk decides
                log.debug("fs/read_text_file %s failed (%s); reading the disk", path, exc)
        return read_disk_text(path)

    def write(self, path: Path, text: str) -> None:
        """fs/write_text_file (the client updates its buffer and the file)."""
        self.call(self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text))

    def call(self, coro: Awaitable[Any], timeout: float = CLIENT_TIMEOUT) -> Any:
        """Run a client request on the connection's loop and wait for it (from a worker thread only)."""
        future: Future = asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise

    def _on_loop(self) -> bool:
        """True on the event loop's own thread (where waiting for the client would deadlock)."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False


class ConsentOverlay(Overlay):
    """An Overlay whose every write asks first: approved changes land at once, rejected ones never touch disk.

    An approved change is written through the client's fs/write_text_file when it offers it (so open buffers get
    it, after checking the buffer still holds the text the agent edited), else to disk with the same stale-file
    checks as `ask --apply`; it then leaves the overlay, so the run's proposal holds only what was not settled
    (changes made on the event loop's thread, which must not block; the front-end asks about those at the end).
    A rejected change is dropped and the tool call fails with an observation saying the user declined it.
    """

    def __init__(
        self,
        root: Path,
        files: ClientFiles,
        consent: Consent,
        *,
        max_file_size: int | None = None,
        read_only: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__(root, read_disk=self._read_hook, max_file_size=max_file_size)
        self.files = files
        self.consent = consent
        self.read_only = read_only
        self.run_id = ""  # the run writing (set once built): every approved write is journaled for /rewind
        self._local = threading.local()
        self._written: dict[
            str, FileChange | None
        ] = {}  # path -> the change written this run (first base, last text)

    def read_text(self, rel: str) -> str:
        """As Overlay.read_text, reading unchanged files through the client."""
        with self._through_client():
            return super().read_text(rel)

    def write_text(self, rel: str, text: str) -> None:
        """Ask, then write the change (or raise ToolError saying it was declined)."""
        self._refuse_in_ask_mode(rel)
        with self._through_client():
            super().write_text(rel, text)
        self._settle(self.normalize(rel))

    def delete(self, rel: str) -> None:
        """Ask, then delete the file on disk (or raise ToolError saying it was declined)."""
        self._refuse_in_ask_mode(rel)
        with self._through_client():
            super().delete(rel)
        self._settle(self.normalize(rel))

    def _settle(self, key: str) -> None:
        """Ask about the overlay's change to `key` and write or drop it."""
        change = next((c for c in self.to_proposal().changes if c.path == key), None)
        if change is None or self.files._on_loop():
            return
        try:
            allowed, how = self.files.call(self.consent(change), timeout=None)  # type: ignore[arg-type]
        except BaseException:
            self.revert(key)
            raise
        if not allowed:
            self.revert(key)
            raise ToolError(rejection_message(key, how))
        error = write_change(self.root, change, self.files, self.run_id)
        self.revert(key)  # settled either way: later reads see the written file, a failed write is reported
        if error:
            raise ToolError(error)
        self._written[key] = _since_first(self._written.get(key), change)

    def checked_changes(self) -> list[FileChange]:
        """The proposal's changes and those written with consent this run: the run's checks judge them all."""
        changes: dict[str, FileChange | None] = dict(self._written)
        for change in self.to_proposal().changes:
            changes[change.path] = _since_first(changes.get(change.path), change)
        return [change for _, change in sorted(changes.items()) if change is not None]

    def _refuse_in_ask_mode(self, rel: str) -> None:
        """Ask mode is read-only: no write is even proposed."""
        if self.read_only():
            raise ToolError(
                f"{rel}: not changed: this session is in Ask mode, where the agent only reads. Answer the question "
                "without editing; the user can switch to Code mode to let you edit."
            )

    @contextlib.contextmanager
    def _through_client(self) -> Iterator[None]:
        """Within this block (on this thread), unchanged files are read through the client."""
        self._local.client = True
        try:
            yield
        finally:
            self._local.client = False

    def _read_hook(self, path: Path) -> str | None:
        """The Overlay's read hook: the client's text inside _through_client, else the disk's."""
        if getattr(self._local, "client", False):
            return self.files.read(path)
        return read_disk_text(path)


def _since_first(first: FileChange | None, latest: FileChange) -> FileChange | None:
    """One file's change since the run first changed it: the first change's base, the latest change's text (None
    when it is back where it started)."""
    if first is None:
        return latest
    base, new = first.base_text, latest.new_text
    if base == new:
        return None
    kind = "delete" if new is None else "create" if base is None else "modify"
    return FileChange(latest.path, kind, base, new)


def write_change(root: Path, change: FileChange, files: ClientFiles, run_id: str = "") -> str | None:
    """Write one approved change (journaled for /rewind under `run_id`); None on success, else what went wrong."""
    error = _write(root, change, files)
    if error is None and run_id:
        after = None if change.kind == "delete" else change.new_text
        try:
            record_apply(root, run_id, [AppliedFile(change.path, change.base_text, after)])
        except OSError as exc:
            log.warning("the write of %s was not journaled (/rewind cannot restore it): %s", change.path, exc)
    return error


def _write(root: Path, change: FileChange, files: ClientFiles) -> str | None:
    """Write one change through the client (or to disk); None on success, else what went wrong (nothing was written)."""
    if change.kind == "delete" or not files.can_write:
        errors = Proposal([change]).apply_to_disk(root)
        return "; ".join(errors) if errors else None
    path = root / change.path
    try:
        current = files.read(path)
    except Exception as exc:  # noqa: BLE001 - unreadable now: refuse rather than overwrite blindly
        return f"{change.path}: could not be read before writing ({exc}); not written"
    if current != change.base_text:
        where = "was created" if change.base_text is None else "changed"
        return (
            f"{change.path}: {where} in the editor or on disk since the agent read it; not written "
            "(read it again and redo the edit)"
        )
    assert change.new_text is not None
    try:
        files.write(path, change.new_text)
    except Exception as exc:  # noqa: BLE001 - the client's error becomes the observation
        return f"{change.path}: the editor could not write it ({exc}); not written"
    return None


def rejection_message(key: str, how: str) -> str:
    """The observation the model reads when an edit was declined."""
    if how == "settings":
        why = "the permissions setting denies edits (edit_files: deny)"
    elif how == "remembered":
        why = "the user's saved permissions reject edits (edit_files)"
    else:
        why = "the user rejected it"
    return (
        f"{key}: the change was not written because {why}; the file is unchanged. Do not repeat the same edit: "
        "try a different approach or finish and explain what you would change."
    )
