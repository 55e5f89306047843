"""Overlay: proposed writes are visible to later reads, never reach disk, and keep the exact base text."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lsp_agent.workspace.overlay import FileTooLargeError, NotTextError, Overlay
from lsp_agent.workspace.paths import PathError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / "notes.txt").write_bytes(b"line one\r\nline two\r\n")
    return ws


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_writes_are_visible_to_reads_but_never_touch_disk(root):
    before = _snapshot(root)
    overlay = Overlay(root)
    overlay.write_text("pkg/mod.py", "x = 2\n")
    overlay.write_text("new/sub/file.py", "y = 1\n")
    overlay.delete("notes.txt")
    assert overlay.read_text("pkg/mod.py") == "x = 2\n"
    assert overlay.read_text("new/sub/file.py") == "y = 1\n"
    with pytest.raises(FileNotFoundError, match="deleted earlier in this run"):
        overlay.read_text("notes.txt")
    assert _snapshot(root) == before
    assert overlay.changed_paths() == ["new/sub/file.py", "notes.txt", "pkg/mod.py"]
    assert overlay.created_paths() == ["new/sub/file.py"]
    assert overlay.deleted_paths() == ["notes.txt"]
    assert overlay.overrides() == {"pkg/mod.py": "x = 2\n", "new/sub/file.py": "y = 1\n", "notes.txt": None}
    assert [overlay.change_kind(p) for p in ("pkg/mod.py", "new/sub/file.py", "notes.txt")] == [
        "modified",
        "created",
        "deleted",
    ]


def test_existence_checks_follow_the_overlay(root):
    overlay = Overlay(root)
    overlay.write_text("new/sub/file.py", "")
    overlay.delete("pkg/mod.py")
    assert overlay.exists("new") and overlay.is_dir("new") and overlay.is_dir("new/sub")
    assert overlay.is_file("new/sub/file.py") and not overlay.is_dir("new/sub/file.py")
    assert not overlay.exists("pkg/mod.py") and not overlay.is_file("pkg/mod.py")
    assert overlay.is_dir("pkg") and overlay.is_dir(".")
    assert not overlay.exists("ghost.txt")


def test_exact_text_is_kept_including_crlf(root):
    overlay = Overlay(root)
    assert overlay.read_text("notes.txt") == "line one\r\nline two\r\n"
    overlay.write_text("notes.txt", "line one\r\nline 2\r\n")
    change = overlay.to_proposal().changes[0]
    assert change.base_text == "line one\r\nline two\r\n"


def test_base_is_the_text_last_read_even_if_disk_changed_afterwards(root):
    overlay = Overlay(root)
    assert overlay.read_text("pkg/mod.py") == "x = 1\n"
    (root / "pkg" / "mod.py").write_text("x = 100\n")  # the user edits the file meanwhile
    overlay.write_text("pkg/mod.py", "x = 2\n")
    assert overlay.base_text("pkg/mod.py") == "x = 1\n"
    assert overlay.to_proposal().changes[0].base_text == "x = 1\n"


def test_writing_the_base_text_back_drops_the_change_and_revert(root):
    overlay = Overlay(root)
    overlay.write_text("pkg/mod.py", "x = 2\n")
    overlay.write_text("pkg/mod.py", "x = 1\n")
    assert overlay.changed_paths() == []
    overlay.write_text("pkg/mod.py", "x = 3\n")
    assert overlay.revert("pkg/mod.py") is True
    assert overlay.revert("pkg/mod.py") is False
    assert overlay.read_text("pkg/mod.py") == "x = 1\n"


def test_delete_then_recreate_is_a_modify_and_created_then_deleted_is_nothing(root):
    overlay = Overlay(root)
    overlay.delete("pkg/mod.py")
    overlay.write_text("pkg/mod.py", "x = 9\n")
    assert overlay.change_kind("pkg/mod.py") == "modified"
    overlay.write_text("tmp.py", "t = 1\n")
    overlay.delete("tmp.py")
    assert overlay.changed_paths() == ["pkg/mod.py"]
    with pytest.raises(FileNotFoundError):
        overlay.delete("tmp.py")


def test_refusals(root, tmp_path):
    (root / "blob.bin").write_bytes(b"\x00\x01")
    (root / "latin.txt").write_bytes(b"caf\xe9")
    (root / "big.txt").write_text("x" * 200)
    os.mkfifo(root / "pipe")
    overlay = Overlay(root, max_file_size=100)
    with pytest.raises(NotTextError, match="binary"):
        overlay.read_text("blob.bin")
    with pytest.raises(NotTextError, match="non-UTF-8"):
        overlay.read_text("latin.txt")
    with pytest.raises(FileTooLargeError, match="over the 100-byte limit"):
        overlay.read_text("big.txt")
    with pytest.raises(PathError, match="FIFO"):
        overlay.read_text("pipe")
    with pytest.raises(PathError, match="FIFO"):
        overlay.write_text("pipe", "x")
    with pytest.raises(PathError, match="outside"):
        overlay.write_text("../escape.txt", "x")
    with pytest.raises(PathError, match=".git"):
        overlay.write_text(".git/config", "x")
    with pytest.raises(IsADirectoryError):
        overlay.write_text("pkg", "x")
    with pytest.raises(IsADirectoryError):
        overlay.read_text(".")
    with pytest.raises(NotADirectoryError, match="parent pkg/mod.py is a file"):
        overlay.write_text("pkg/mod.py/inner.py", "x")
    assert not (tmp_path / "escape.txt").exists()
    assert overlay.changed_paths() == []


def test_read_disk_hook_substitutes_editor_buffers(root):
    buffers = {os.path.realpath(root / "pkg" / "mod.py"): "x = 'unsaved'\n"}

    def read_disk(path: Path) -> str:
        return buffers.get(str(path)) or path.read_text()

    overlay = Overlay(root, read_disk=read_disk)
    assert overlay.read_text("pkg/mod.py") == "x = 'unsaved'\n"
    overlay.write_text("pkg/mod.py", "x = 'agent'\n")
    assert overlay.base_text("pkg/mod.py") == "x = 'unsaved'\n"


def test_view_text_does_not_record_a_base(root):
    overlay = Overlay(root)
    assert overlay.view_text("pkg/mod.py") == "x = 1\n"
    (root / "pkg" / "mod.py").write_text("x = 5\n")
    overlay.write_text("pkg/mod.py", "x = 6\n")
    assert overlay.base_text("pkg/mod.py") == "x = 5\n"


def test_materialize_writes_changes_into_a_scratch_copy(root, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "pkg").mkdir()
    (scratch / "pkg" / "mod.py").write_text("x = 1\n")
    (scratch / "notes.txt").write_text("old\n")
    overlay = Overlay(root)
    overlay.write_text("pkg/mod.py", "x = 2\n")
    overlay.write_text("new/a.py", "a = 1\r\n")
    overlay.delete("notes.txt")
    overlay.materialize(scratch)
    assert (scratch / "pkg" / "mod.py").read_text() == "x = 2\n"
    assert (scratch / "new" / "a.py").read_bytes() == b"a = 1\r\n"
    assert not (scratch / "notes.txt").exists()
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"


def test_concurrent_writes_from_threads_are_all_kept(root):
    overlay = Overlay(root)

    def writer(i: int) -> None:
        for j in range(20):
            overlay.write_text(f"gen/t{i}/f{j}.txt", f"{i}-{j}\n")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(overlay.created_paths()) == 80
    assert overlay.read_text("gen/t3/f19.txt") == "3-19\n"
