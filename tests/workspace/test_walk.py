"""Walk rules: .gitignore (nested, negations), hidden dirs, symlinks, binary and oversize files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.workspace.walk import is_binary_file, is_ignored, walk_entries, walk_workspace


def _write(root: Path, rel: str, data: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def _rels(root: Path, paths) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root, ".gitignore", "*.log\nbuild/\n/secret.txt\n")
    _write(root, "main.py")
    _write(root, "app.log")
    _write(root, "secret.txt")
    _write(root, "pkg/secret.txt")  # anchored pattern only matches at the root
    _write(root, "build/out.py")
    _write(root, "pkg/build/gen.py")
    _write(root, "pkg/.gitignore", "*.tmp\n!keep.log\n")
    _write(root, "pkg/mod.py")
    _write(root, "pkg/scratch.tmp")
    _write(root, "pkg/keep.log")
    _write(root, "other/scratch.tmp")
    _write(root, ".git/config", "[core]\n")
    _write(root, ".venv/lib/site.py")
    _write(root, ".env", "A=1\n")
    return root


def test_walking_a_subtree_keeps_the_rules_of_a_whole_walk(repo: Path) -> None:
    _write(repo, "pkg/sub/.gitignore", "gen_*.py\n")
    _write(repo, "pkg/sub/deep/gen_a.py")
    _write(repo, "pkg/sub/deep/real.py")
    _write(repo, "pkg/sub/deep/x.tmp")  # ignored by pkg/.gitignore, an ancestor of the start
    ln = repo / "pkg" / "linked"
    ln.symlink_to(repo / "pkg" / "sub", target_is_directory=True)
    whole = _rels(repo, walk_workspace(repo, include_dirs=True, exclude=["*.bak"]))
    for under in ("pkg", "pkg/sub", "pkg/sub/deep", "other"):
        part = _rels(repo, walk_workspace(repo, include_dirs=True, exclude=["*.bak"], under=under + "/"))
        assert part == [r for r in whole if r.startswith(under + "/")], under
    assert _rels(repo, walk_workspace(repo, under="pkg/sub/deep")) == ["pkg/sub/deep/real.py"]
    for not_walked in ("build", "pkg/build", ".venv", ".git", "pkg/linked", "missing", "main.py", "../repo"):
        assert list(walk_workspace(repo, under=not_walked)) == [], not_walked
    assert list(walk_workspace(repo, under="other", exclude=["other/"])) == []


def test_walk_entries_match_the_path_walk(repo: Path) -> None:
    for under in ("", "pkg"):
        paths = list(walk_workspace(repo, include_dirs=True, under=under))
        assert list(walk_entries(repo, include_dirs=True, under=under)) == [
            (p.relative_to(repo).as_posix(), p.is_dir()) for p in paths
        ]


def test_gitignore_root_and_nested(repo: Path) -> None:
    assert ".env" in _rels(repo, walk_workspace(repo, secrets=None))  # a secret file: walked only when asked
    assert _rels(repo, walk_workspace(repo)) == [
        ".gitignore",
        "main.py",
        "other/scratch.tmp",
        "pkg/.gitignore",
        "pkg/keep.log",
        "pkg/mod.py",
        "pkg/secret.txt",
    ]


def test_results_are_absolute_and_sorted(repo: Path) -> None:
    paths = list(walk_workspace(repo))
    assert all(p.is_absolute() for p in paths)
    assert paths == sorted(paths, key=lambda p: p.relative_to(repo).parts)


def test_include_dirs_and_exclude(repo: Path) -> None:
    rels = _rels(repo, walk_workspace(repo, include_dirs=True, exclude=["other/", "*.txt"]))
    assert "pkg" in rels and "build" not in rels and ".git" not in rels
    assert "other" not in rels and "other/scratch.tmp" not in rels
    assert "pkg/secret.txt" not in rels


def test_size_and_binary_filters(tmp_path: Path) -> None:
    _write(tmp_path, "small.py", "a = 1\n")
    _write(tmp_path, "big.py", "a = 1\n" * 1000)
    _write(tmp_path, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    _write(tmp_path, "latin1.txt", "caf\xe9".encode("latin-1"))
    _write(tmp_path, "utf8.txt", "café ünïcode\n")
    assert _rels(tmp_path, walk_workspace(tmp_path, max_file_size=100)) == [
        "image.png",
        "latin1.txt",
        "small.py",
        "utf8.txt",
    ]
    assert _rels(tmp_path, walk_workspace(tmp_path, skip_binary=True)) == ["big.py", "small.py", "utf8.txt"]


def test_is_binary_file_prefix_boundary(tmp_path: Path) -> None:
    # A multi-byte character split by the 8 KiB sniff window is still text.
    text = "a" * 8191 + "é" * 10
    path = _write(tmp_path, "edge.txt", text)
    assert not is_binary_file(path)
    assert is_binary_file(_write(tmp_path, "nul.bin", b"abc\x00def"))
    assert is_binary_file(tmp_path / "missing")


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    _write(outside, "leak.py")
    _write(root, "real/mod.py")
    (root / "out_file.py").symlink_to(outside / "leak.py")
    (root / "out_dir").symlink_to(outside, target_is_directory=True)
    (root / "in_file.py").symlink_to(root / "real" / "mod.py")
    (root / "in_dir").symlink_to(root / "real", target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "nope.py")
    os.mkfifo(root / "pipe")
    assert _rels(root, walk_workspace(root)) == ["in_file.py", "real/mod.py"]
    assert is_ignored(root, root / "out_file.py")


def test_is_ignored_matches_walk(repo: Path) -> None:
    walked = set(_rels(repo, walk_workspace(repo)))
    for path in sorted(repo.rglob("*")):
        if path.is_file():
            rel = path.relative_to(repo).as_posix()
            assert is_ignored(repo, path) == (rel not in walked), rel
    assert is_ignored(repo, Path("build/new.py"))
    assert not is_ignored(repo, Path("pkg/new.py"))
    assert is_ignored(repo, Path("pkg/new.py"), exclude=["pkg/"])
    assert is_ignored(repo, repo.parent / "elsewhere.py")
