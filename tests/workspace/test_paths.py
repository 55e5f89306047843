"""resolve_in_workspace and friends: everything resolves inside the root or is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.workspace.paths import (
    PathError,
    check_writable_rel,
    index_rel,
    normalize_rel,
    require_regular_file,
    resolve_in_workspace,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a = 1\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return ws


def test_relative_and_inside_absolute_paths_resolve(root):
    real = Path(os.path.realpath(root))
    assert resolve_in_workspace(root, "src/a.py") == real / "src/a.py"
    assert resolve_in_workspace(root, "./src/../src/a.py") == real / "src/a.py"
    assert resolve_in_workspace(root, str(root / "src/a.py")) == real / "src/a.py"
    assert resolve_in_workspace(root, "new/dir/file.py") == real / "new/dir/file.py"  # need not exist
    assert resolve_in_workspace(root, ".") == real
    assert normalize_rel(root, "src//a.py") == "src/a.py"
    assert normalize_rel(root, ".") == "."


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("../outside.txt", "outside the workspace root"),
        ("src/../../outside.txt", "outside the workspace root"),
        ("/etc/passwd", "outside the workspace root"),
        ("~/x", "outside the workspace root"),
        ("", "path is empty"),
        ("   ", "path is empty"),
        ("a\x00b", "NUL"),
    ],
)
def test_escapes_and_malformed_paths_are_refused(root, rel, message):
    with pytest.raises(PathError, match=message):
        resolve_in_workspace(root, rel)


def test_root_relative_absolute_path_gets_a_hint(root):
    with pytest.raises(PathError, match=r"outside the workspace root .*\(did you mean 'src/a.py'\?\)"):
        resolve_in_workspace(root, "/src/a.py")


def test_non_string_path_is_refused(root):
    with pytest.raises(PathError, match="must be a string"):
        resolve_in_workspace(root, 5)  # type: ignore[arg-type]


def test_symlinks_leading_out_are_refused_and_inside_ones_followed(root, tmp_path):
    (root / "out_file").symlink_to(tmp_path / "outside.txt")
    (root / "out_dir").symlink_to(tmp_path, target_is_directory=True)
    (root / "in_link").symlink_to(root / "src" / "a.py")
    for rel in ("out_file", "out_dir/outside.txt"):
        with pytest.raises(PathError, match="symlink on this path leads outside"):
            resolve_in_workspace(root, rel)
    # a link that leaves the root and comes back resolves inside it, so it is allowed
    assert normalize_rel(root, "out_dir/ws/src/a.py") == "src/a.py"
    assert normalize_rel(root, "in_link") == "src/a.py"


def test_root_given_through_a_symlink(root, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert normalize_rel(alias, "src/a.py") == "src/a.py"
    with pytest.raises(PathError):
        resolve_in_workspace(alias, "../outside.txt")


def test_require_regular_file_names_the_file_type(root):
    os.mkfifo(root / "pipe")
    with pytest.raises(PathError, match="is a FIFO"):
        require_regular_file(root / "pipe", "pipe")
    with pytest.raises(IsADirectoryError, match="src: is a directory"):
        require_regular_file(root / "src", "src")
    with pytest.raises(FileNotFoundError, match="nope: file not found"):
        require_regular_file(root / "nope", "nope")
    assert require_regular_file(root / "src/a.py", "src/a.py").st_size == 6


def test_git_directory_is_not_writable():
    with pytest.raises(PathError, match="inside .git/"):
        check_writable_rel(".git/hooks/pre-commit")
    check_writable_rel(".github/workflows/ci.yml")


def test_index_rel_keys_files_by_their_path_under_the_root(root):
    real = Path(os.path.realpath(root))
    assert (
        index_rel(real, "src/a.py")
        == index_rel(real, "./src//a.py")
        == index_rel(real, "src\\a.py")
        == "src/a.py"
    )
    assert index_rel(real, real / "src" / "a.py") == "src/a.py"
    assert index_rel(real, real / "src" / "new.py") == "src/new.py"  # not on disk (yet): taken as written
    link = root.parent / "link"
    link.symlink_to(root, target_is_directory=True)
    assert index_rel(real, link / "src" / "a.py") == "src/a.py"  # an existing file is resolved first
    for outside in (root.parent / "outside.txt", Path("/etc/passwd")):
        with pytest.raises(ValueError, match="outside the workspace"):
            index_rel(real, outside)
    for bad in ("", ".", "../outside.txt", "src/../../x"):
        with pytest.raises(ValueError, match="not a file path inside the workspace"):
            index_rel(real, bad)
