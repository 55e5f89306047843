"""Every path-taking tool refuses `..`, foreign absolute paths, escaping symlinks and special files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

PATH_CALLS = [
    ("read_file", {}),
    ("get_file_info", {}),
    ("write_file", {"content": "pwned\n"}),
    ("edit_file", {"old_text": "root", "new_text": "toor"}),
    ("delete_file", {}),
    ("search_text", {"pattern": "root"}),
    ("list_files", {}),
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a file the agent must never reach."""
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("root:secret\n")
    return other


def _escapes(workspace: Path, outside: Path) -> dict[str, str]:
    (workspace / "link_out").symlink_to(outside / "secret.txt")
    (workspace / "dir_out").symlink_to(outside, target_is_directory=True)
    return {
        "../outside/secret.txt": "outside the workspace root",
        "src/../../outside/secret.txt": "outside the workspace root",
        str(outside / "secret.txt"): "outside the workspace root",
        "link_out": "symlink on this path leads outside",
        "dir_out/secret.txt": "symlink on this path leads outside",
    }


@pytest.mark.parametrize(("tool", "extra"), PATH_CALLS)
def test_escaping_paths_are_refused_by_every_tool(tool, extra, ctx, call, workspace, outside):
    for path, expected in _escapes(workspace, outside).items():
        res = call(ctx, tool, {"path": path, **extra})
        assert not res.ok, (tool, path, res.output)
        assert res.output.startswith("Error: ") and expected in res.output, (tool, path, res.output)
    assert (outside / "secret.txt").read_text() == "root:secret\n"
    assert ctx.overlay.changed_paths() == []


def test_list_files_and_search_never_follow_escaping_symlinks(ctx, call, workspace, outside):
    _escapes(workspace, outside)
    assert "secret" not in call(ctx, "list_files", pattern="**/*").output
    assert "root:secret" not in call(ctx, "search_text", pattern="root").output


@pytest.mark.parametrize("tool", ["read_file", "get_file_info", "write_file", "edit_file", "delete_file"])
def test_fifo_is_refused_without_blocking(tool, ctx, call, workspace):
    os.mkfifo(workspace / "pipe")
    extra = dict(dict(PATH_CALLS)[tool])
    res = call(ctx, tool, {"path": "pipe", **extra})
    assert not res.ok
    assert "FIFO" in res.output and "not a regular file" in res.output
    assert res.seconds < 5


def test_fifo_is_skipped_by_search_and_named_when_explicit(ctx, call, workspace):
    os.mkfifo(workspace / "pipe")
    assert call(ctx, "search_text", pattern="greet").ok
    res = call(ctx, "search_text", pattern="greet", path="pipe")
    assert not res.ok and "is a FIFO (named pipe), not a regular file" in res.output


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_device_node_is_refused(ctx, call, workspace):
    os.mknod(workspace / "null_dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    res = call(ctx, "read_file", path="null_dev")
    assert not res.ok and "character device" in res.output
    res = call(ctx, "write_file", path="null_dev", content="x")
    assert not res.ok and "character device" in res.output


def test_symlink_to_system_device_is_refused(ctx, call, workspace):
    (workspace / "devnull").symlink_to("/dev/null")
    res = call(ctx, "read_file", path="devnull")
    assert not res.ok and "leads outside" in res.output
