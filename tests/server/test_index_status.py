"""lspAgent.status's index section while the first refresh runs: committed counts plus live progress."""

from __future__ import annotations

import threading
from pathlib import Path

from server_editor import write_tree

from lsp_agent.config import Settings
from lsp_agent.server.indexing import FolderIndex, IndexManager


class RecordingReporter:
    """Stands in for the $/progress reporter: on each report it reads the status as lspAgent.status would."""

    def __init__(self) -> None:
        self.manager: IndexManager | None = None
        self.seen: list[dict] = []

    def report_threadsafe(self, message: str, percentage: int) -> None:
        assert self.manager is not None
        self.seen.append(self.manager.stats())


def test_status_shows_progress_during_a_refresh_and_not_after(tmp_path: Path) -> None:
    files = {f"pkg/m{i:03d}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(40)}
    root = write_tree(tmp_path / "ws", files)
    reporter = RecordingReporter()
    manager = IndexManager(lambda title: reporter, Settings)
    reporter.manager = manager
    manager.set_folders([root])
    folder: FolderIndex = manager.folders[root.absolute()]
    try:
        manager._refresh_folder(folder, reporter, threading.Event())
        during = [s["indexing"] for s in reporter.seen if "indexing" in s]
        assert during and during[-1]["total"] == 40 and during[-1]["done"] == 40
        assert all(s["files"] == 0 for s in reporter.seen)  # nothing committed until the refresh ends
        after = manager.stats()
        assert "indexing" not in after and after["files"] == 40 and after["ready"] is True
    finally:
        manager.close()
