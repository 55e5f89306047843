"""Read, hash and analyse changed files, in worker processes when there are many (tree-sitter holds the GIL)."""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.index.chunking import analyze
from lsp_agent.index.rows import FileRows, file_rows, text_hash
from lsp_agent.workspace.walk import BINARY_SNIFF_BYTES

PARALLEL_MIN_FILES = 300  # below this, starting worker processes costs more than it saves
JOBS_PER_TASK = 16


@dataclass(frozen=True)
class FileJob:
    """A file whose size or mtime differs from the index; `old_hash` lets unchanged content skip parsing."""

    path: str  # relative POSIX
    abs_path: str
    size: int
    mtime_ns: int
    old_hash: str | None


@dataclass
class FileResult:
    """The outcome for one job: `status` is "parsed", "same" (content unchanged) or "skipped" (binary/unreadable)."""

    job: FileJob
    status: str
    digest: str = ""
    rows: FileRows | None = None


def decode_source(data: bytes) -> str | None:
    """The text of a source file, or None when it looks binary."""
    head = data[:BINARY_SNIFF_BYTES]
    if b"\0" in head:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not (len(head) == BINARY_SNIFF_BYTES and exc.start >= len(head) - 3):
                return None
        return data.decode("utf-8", errors="replace")


def run_job(job: FileJob, ahead: FileResult | None = None) -> FileResult:
    """Read one file and analyse it unless its content hash is unchanged; `ahead`: its analysis made earlier
    (parse_ahead()), taken when the file still has the bytes it was made from."""
    try:
        data = Path(job.abs_path).read_bytes()
    except OSError:
        return FileResult(job, "skipped")
    digest = text_hash(data)
    if digest == job.old_hash:
        return FileResult(job, "same", digest)
    if (
        ahead is not None
        and ahead.status == "parsed"
        and ahead.digest == digest
        and ahead.job.path == job.path
    ):
        return FileResult(job, "parsed", digest, ahead.rows)
    text = decode_source(data)
    if text is None:
        return FileResult(job, "skipped", digest)
    return FileResult(job, "parsed", digest, file_rows(job.path, analyze(job.path, text)))


def parse_ahead(jobs: Sequence[FileJob], while_alive: threading.Thread, ahead: dict[str, FileResult]) -> int:
    """Analyse files that will likely need it while another thread works (a join's download), each result kept
    by path for run_jobs(); stops when that thread ends (the rest are parsed in their turn). Returns how many."""
    with paused_gc():
        for job in jobs:
            if not while_alive.is_alive():
                break
            result = run_job(job)
            if result.status == "parsed":
                ahead[job.path] = result
    return len(ahead)


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for a while (analysis rows make no cycles; collections only cost time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _run_batch(jobs: Sequence[FileJob]) -> list[FileResult]:
    """run_job() over a batch in a worker."""
    with paused_gc():
        return [run_job(j) for j in jobs]


def worker_count() -> int:
    """Worker processes to use: the CPUs this process may run on, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _ready() -> None:
    """A no-op task: submitting it makes the pool spawn a worker, which imports this module (and chunking)."""


def _lower_priority(niceness: int) -> None:
    """Worker initializer: run at a lower CPU priority (a background index yields the CPU to the editor)."""
    try:
        os.nice(niceness)
    except OSError:  # not permitted here: run at the normal priority
        pass


class Workers:
    """The worker processes of one refresh, started early so they boot while the caller is still walking."""

    def __init__(self, niceness: int = 0) -> None:
        # the language server raises niceness (IndexConfig.worker_niceness): its index runs in the background
        self.niceness = niceness
        self.count = worker_count()
        self.pool: ProcessPoolExecutor | None = None
        self._exiting: threading.Thread | None = None
        # Files analysed before the refresh reached them (parse_ahead() while a join downloads), by path.
        self.ahead: dict[str, FileResult] = {}

    def start(self) -> None:
        """Spawn the workers now (no-op with one CPU or when already started)."""
        if self.pool is None and self.count > 1:
            # spawn, not fork: the language server has threads, and forking a threaded process can deadlock.
            self.pool = ProcessPoolExecutor(
                self.count,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority if self.niceness else None,
                initargs=(self.niceness,),
            )
            for _ in range(self.count):
                self.pool.submit(_ready)  # each submit spawns one more worker

    def finish(self) -> None:
        """All work is done: let the workers exit in the background (the caller commits meanwhile)."""
        if self.pool is not None and self._exiting is None:
            self._exiting = threading.Thread(
                target=self.pool.shutdown, name="index-workers-exit", daemon=True
            )
            self._exiting.start()

    def close(self) -> None:
        """Wait until the workers have exited; queued work is dropped (after a cancellation)."""
        if self.pool is not None:
            if self._exiting is None:
                self.pool.shutdown(wait=True, cancel_futures=True)
            else:
                self._exiting.join()
            self.pool = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_jobs(jobs: Sequence[FileJob], workers: Workers) -> Iterator[FileResult]:
    """Results in job order; the workers for large batches, this thread otherwise (taking the analyses made
    ahead, Workers.ahead: parse_ahead() is for a handful of changed files, never for a batch of workers).

    The consumer may stop iterating early (cancellation); outstanding work is dropped when `workers` closes.
    """
    if workers.count <= 1 or len(jobs) < PARALLEL_MIN_FILES:
        for job in jobs:
            yield run_job(job, workers.ahead.get(job.path))
        return
    workers.start()
    assert workers.pool is not None
    batches = [jobs[i : i + JOBS_PER_TASK] for i in range(0, len(jobs), JOBS_PER_TASK)]
    for batch in workers.pool.map(_run_batch, batches):
        yield from batch
    workers.finish()
