"""Background indexing of the workspace folders, kept fresh from the editor's buffers and file events."""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path

from lsp_agent.config import Settings

if TYPE_CHECKING:
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.server.progress import ProgressReporter

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.3
REPORT_INTERVAL = 0.1
INDEX_WORKER_NICENESS = 10  # parsing processes yield the CPU to the process answering the editor


@dataclass
class FolderIndex:
    """One workspace folder and its index."""

    root: Path
    index: WorkspaceIndex | None = None
    ready: bool = False
    error: str | None = None
    progress: tuple[int, int] | None = None  # (files done, files to do) while a refresh runs
    team_down: bool = False  # the team index was unreachable at the last refresh (shown once per outage)


def release_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS (indexing leaves large transient allocations)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def index_config_key(settings: Settings) -> tuple:
    """The settings that change what the index holds (a change means reindexing)."""
    return (
        settings.embeddings,
        tuple(settings.index_exclude) + tuple(settings.secret_files),
        settings.max_file_size,
        settings.api_base,
        settings.index_store,
    )


class IndexManager:
    """Owns a WorkspaceIndex per folder; all blocking work runs in worker threads, never on the event loop."""

    def __init__(
        self,
        progress: Callable[[str], ProgressReporter],
        settings: Callable[[], Settings],
        open_buffers: Callable[[], list[tuple[Path, str]]] = list,
        warn: Callable[[str], None] = log.warning,
        notice: Callable[[str], None] = log.warning,
        yield_to_editor: Callable[[], None] = lambda: None,
    ) -> None:
        self._yield_to_editor = yield_to_editor  # called between files: pauses while the editor is served
        self._progress = progress
        self._warn, self._notice = warn, notice  # notice: a warning that stops nothing
        self._settings = settings
        self._open_buffers = open_buffers
        self.folders: dict[Path, FolderIndex] = {}
        self._refresh_task: asyncio.Task | None = None
        self._cancel = threading.Event()
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._lock = threading.Lock()
        self._config_key: tuple | None = None
        self._lexical_only: str | None = None  # the embeddings setting that failed (indexes open without it)

    # ----- folders and refreshing -------------------------------------------------------------------------

    def set_folders(self, roots: list[Path]) -> None:
        """Track exactly these folders (closing indexes of folders that left)."""
        wanted = {r.absolute() for r in roots}
        for root in list(self.folders):
            if root not in wanted:
                folder = self.folders.pop(root)
                self._cancel.set()  # stop a refresh that may be busy with it; reindex() starts the next one
                threading.Thread(
                    target=self._close, args=(folder,), name="lsp-agent-close-index", daemon=True
                ).start()
        for root in sorted(wanted):
            self.folders.setdefault(root, FolderIndex(root))

    def folder_for(self, path: Path) -> FolderIndex | None:
        """The innermost folder containing `path`."""
        best: FolderIndex | None = None
        for root, folder in self.folders.items():
            if path == root or root in path.parents:
                if best is None or len(root.parts) > len(best.root.parts):
                    best = folder
        return best

    @property
    def ready(self) -> bool:
        """True when every folder has been indexed at least once."""
        return bool(self.folders) and all(f.ready for f in self.folders.values())

    def reindex(self, *, rebuild: bool = False) -> asyncio.Task:
        """Start (or restart) a background refresh of every folder.

        Changed index settings reopen the indexes with the new configuration; rebuild also deletes their databases
        so everything is parsed again. Closing and deleting happen in worker threads, after the previous refresh.
        """
        if self._refresh_task and not self._refresh_task.done():
            self._cancel.set()
        key = index_config_key(self._settings())
        reopen = self._config_key is not None and key != self._config_key
        self._config_key = key
        previous = self._refresh_task
        self._refresh_task = asyncio.get_running_loop().create_task(
            self._refresh_all(previous, reopen=reopen or rebuild, rebuild=rebuild)
        )
        return self._refresh_task

    async def wait_ready(self, timeout: float) -> bool:
        """Wait (up to `timeout` s) for the current refresh; True when the index is ready."""
        task = self._refresh_task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except (TimeoutError, asyncio.CancelledError):
                pass
        return self.ready

    async def _refresh_all(
        self, previous: asyncio.Task | None, *, reopen: bool = False, rebuild: bool = False
    ) -> None:
        """Refresh each folder under one cancellable progress token."""
        from lsp_agent.index.embeddings import EmbeddingError  # the index package loads after initialize

        if previous is not None and not previous.done():
            try:
                await previous
            except (asyncio.CancelledError, Exception):
                pass
        if reopen:
            for folder in list(self.folders.values()):
                await asyncio.to_thread(self._close, folder, delete=rebuild)
        self._cancel = cancel = threading.Event()
        reporter = self._progress("lsp-agent: indexing")
        await reporter.begin("indexing the workspace", on_cancel=cancel.set)
        totals = {"files": 0, "chunks": 0, "symbols": 0}
        try:
            for folder in list(self.folders.values()):
                if cancel.is_set():
                    break
                if self.folders.get(folder.root) is not folder:
                    continue  # the folder left the workspace meanwhile
                try:
                    stats = await asyncio.to_thread(self._refresh_folder, folder, reporter, cancel)
                except EmbeddingError as exc:
                    await self._drop_embeddings(exc)
                    stats = await asyncio.to_thread(self._refresh_folder, folder, reporter, cancel)
                # The refresh read the disk: put back the unsaved text of the folder's open documents.
                buffers = [(p, t) for p, t in self._open_buffers() if self.folder_for(p) is folder]
                for path, text in buffers:
                    await asyncio.to_thread(self._update_now, path, text)
                if stats is not None:
                    for key in totals:
                        totals[key] += getattr(stats, key)
        except Exception as exc:  # the server stays up; the error is shown and kept for status
            log.exception("indexing failed")
            reporter.end(f"indexing failed: {exc}")
            raise
        await asyncio.to_thread(release_memory)
        if cancel.is_set():
            reporter.end("indexing cancelled (lspAgent.reindex starts it again)")
        else:
            reporter.end(
                f"indexed {totals['files']} files, {totals['chunks']} chunks, {totals['symbols']} symbols"
            )

    async def _drop_embeddings(self, error: Exception) -> None:
        """The embedding backend failed: say so and index lexically until the embeddings setting changes."""
        failed = self._settings().embeddings
        if self._lexical_only == failed:
            raise error
        self._lexical_only = failed
        self._warn(
            f"lspAgent.embeddings {failed!r} failed: {error}. Indexing without embeddings (lexical search only) "
            "until the setting changes."
        )
        for folder in list(self.folders.values()):
            await asyncio.to_thread(self._close, folder)

    def _refresh_folder(
        self, folder: FolderIndex, reporter: ProgressReporter, cancel: threading.Event
    ) -> Any:
        """Open (if needed) and refresh one folder's index; runs in a worker thread."""
        try:
            index = self._open(folder)
            last = 0.0
            name = folder.root.name or str(folder.root)

            def progress(done: int, total: int, rel: str) -> None:
                nonlocal last
                self._yield_to_editor()
                folder.progress = (done, total)
                now = time.monotonic()
                if now - last >= REPORT_INTERVAL or done == total:
                    last = now
                    pct = int(done * 100 / total) if total else 100
                    reporter.report_threadsafe(f"{name}: {done}/{total} {rel}", pct)

            try:
                stats = index.refresh(progress=progress, cancel=cancel)
            finally:
                folder.progress = None
        except Exception as exc:
            folder.error = f"{type(exc).__name__}: {exc}"
            raise
        folder.error = None
        if not cancel.is_set():
            folder.ready = True
        self._note_team(folder, index)
        return stats

    def _note_team(self, folder: FolderIndex, index: WorkspaceIndex) -> None:
        """Show an unreachable team index once per outage; the local index serves meanwhile."""
        status = index.team.status if index.team is not None else None
        if status is not None and not folder.team_down:
            self._notice(f"{status}; searching the local index only until it is reachable again")
        folder.team_down = status is not None

    def _open(self, folder: FolderIndex) -> WorkspaceIndex:
        """The folder's index, created on first use with the current settings."""
        with self._lock:
            if folder.index is None:
                from lsp_agent.assembly import index_config
                from lsp_agent.index import WorkspaceIndex

                s = self._settings()
                config = replace(index_config(s), worker_niceness=INDEX_WORKER_NICENESS)
                if s.embeddings == self._lexical_only:  # embeddings failed once: lexical search only
                    config = replace(config, embeddings="none")
                folder.index = WorkspaceIndex(folder.root, config)
                folder.ready = False
            return folder.index

    def _close(self, folder: FolderIndex, *, delete: bool = False) -> None:
        """Close a folder's index (blocking while a refresh holds it: call from a worker thread)."""
        with self._lock:
            index, folder.index, folder.ready = folder.index, None, False
        if index is None:
            return
        try:
            index.close()
        except Exception:
            log.exception("closing the index of %s failed", folder.root)
        if delete:
            db = Path(index.db_path)
            for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    log.warning("could not delete %s: %s", path, exc)

    def close(self) -> None:
        """Stop refreshing and close every index."""
        self._cancel.set()
        for timer in self._timers.values():
            timer.cancel()
        for folder in self.folders.values():
            self._close(folder)

    # ----- keeping fresh ----------------------------------------------------------------------------------

    def schedule_update(self, path: Path, read_text: Callable[[], str | None]) -> None:
        """Re-index one file after a short quiet period (typing sends many changes)."""
        if self.folder_for(path) is None:
            return
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(path, None)
        if timer is not None:
            timer.cancel()

        def fire() -> None:
            self._timers.pop(path, None)
            text = read_text()
            loop.create_task(asyncio.to_thread(self._update_now, path, text))

        self._timers[path] = loop.call_later(DEBOUNCE_SECONDS, fire)

    def update_soon(self, path: Path, text: str | None) -> None:
        """Re-index (text) or drop (None) one file in a worker thread, without debouncing."""
        if self.folder_for(path) is None:
            return
        timer = self._timers.pop(path, None)
        if timer is not None:
            timer.cancel()
        asyncio.get_running_loop().create_task(asyncio.to_thread(self._update_now, path, text))

    def update_from_disk(self, path: Path) -> None:
        """Re-index one file from its disk text (dropping it when it is gone), in a worker thread."""
        if self.folder_for(path) is None:
            return

        def read_and_update() -> None:
            from lsp_agent.workspace.proposal import read_disk_text

            try:
                text = read_disk_text(path)
            except (OSError, ValueError):  # unreadable, not a regular file or not UTF-8: not indexed
                text = None
            self._update_now(path, text)

        asyncio.get_running_loop().create_task(asyncio.to_thread(read_and_update))

    def _update_now(self, path: Path, text: str | None) -> None:
        """Push one file's text into its folder's index (None removes it); errors are logged, never raised."""
        folder = self.folder_for(path)
        if folder is None or folder.index is None:
            return
        try:
            if text is None:
                folder.index.remove_file(path)
                return
            settings = self._settings()
            if len(text.encode("utf-8", "surrogatepass")) > settings.max_file_size:
                return
            from lsp_agent.workspace.secrets import secret_files_of
            from lsp_agent.workspace.walk import is_ignored

            if is_ignored(folder.root, path, settings.index_exclude, secret_files_of(settings)):
                return
            folder.index.update_file(path, text)
        except Exception:
            log.exception("updating the index for %s failed", path)

    # ----- queries ----------------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Totals over all folders, for lspAgent.status."""
        files = chunks = symbols = 0
        errors: list[str] = []
        indexing = [f.progress for f in self.folders.values() if f.progress is not None]
        for folder in self.folders.values():
            if folder.index is not None:
                try:
                    s = folder.index.stats()
                except Exception as exc:
                    errors.append(f"{folder.root}: {exc}")
                    continue
                files, chunks, symbols = files + s.files, chunks + s.chunks, symbols + s.symbols
            if folder.error:
                errors.append(f"{folder.root}: {folder.error}")
        out: dict[str, Any] = {"files": files, "chunks": chunks, "symbols": symbols, "ready": self.ready}
        if indexing:  # the counts above are the last committed refresh's until this one commits
            out["indexing"] = {"done": sum(d for d, _ in indexing), "total": sum(t for _, t in indexing)}
        if errors:
            out["errors"] = errors
        teams = [f.index.team for f in self.folders.values() if f.index is not None and f.index.team]
        if teams:  # one store setting for every folder
            down = [t.status for t in teams if t.status] + [None]
            out["team"] = {"store": teams[0].where, "state": "unreachable" if down[0] else "in use"}
            out["team"]["message"] = down[0]
        return out

    def search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        """Search every folder (blocking: call from a thread); hits as dicts with a `uri`, best first."""
        results: list[dict[str, Any]] = []
        for folder in list(self.folders.values()):
            index = folder.index
            if index is None:
                index = self._open(folder)
            for hit in index.search(query, top_k=top_k):
                item = asdict(hit)
                item["uri"] = from_fs_path(str(folder.root / hit.path))
                if len(self.folders) > 1:
                    item["root"] = str(folder.root)
                results.append(item)
        results.sort(key=lambda r: r.get("score", 0.0), reverse=True)
        return results[:top_k]

    def index_for(self, root: Path) -> WorkspaceIndex | None:
        """The index of a folder (None until it was opened)."""
        folder = self.folders.get(root)
        return folder.index if folder else None
