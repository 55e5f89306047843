"""Path attacks on every non-exec tool: each is refused with a precise message or stays inside the workspace.

A fresh workspace per case holds escaping symlinks (to files, to directories, relative, in chains, dangling,
as a parent directory, to /proc/self/root and /dev), a symlink loop, a hard link to a file outside, a FIFO, a
socket and a device node. Every case asserts its exact outcome, that nothing from outside reached the
observation, that nothing outside changed, and that any proposal it left writes only inside the root when
applied. (tests/tools/test_path_escapes.py covers the basic forms per tool; the exec tools are the sandbox's.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.tools.registry import ToolContext, ToolResult, default_registry
from lsp_agent.workspace.overlay import Overlay

OUTSIDE_MARKERS = ("OUTSIDE-SECRET", "OUTSIDE-INNER", "OUTSIDE-DEF", "root:x:0:0")
APP = "def greet():\n    return 'hello'\n"

OUT = "outside the workspace root"
LINK = "a symlink on this path leads outside the workspace root"
WIN = "a Windows drive or network path"
URL = "a URL, not a workspace path"
HOST = "a file:// URI on another host"
NUL = "path contains a NUL character"
CTRL = "path contains a control character"
LONG = "path is too long"
LOOP = "cannot be read (Too many levels of symbolic links)"
FIFO = "is a FIFO (named pipe), not a regular file"
SOCKET = "is a socket, not a regular file"
DEVICE = "is a character device, not a regular file"
CONFINED = "confined"  # allowed, and it acts on src/app.py inside the workspace

TOOLS = {
    "read_file": {},
    "get_file_info": {},
    "search_text": {"pattern": "hello"},
    "list_files": {},
    "write_file": {"content": "pwned\n"},
    "edit_file": {"old_text": "hello", "new_text": "pwned"},
    "delete_file": {},
}


@dataclass(frozen=True)
class Attack:
    """A path the model might send and the outcome every tool must give (paths may name {ws} and {out})."""

    path: str
    expect: str
    needs_root: bool = False

    def resolve(self, ws: Path, out: Path) -> str:
        return self.path.replace("{ws}", str(ws)).replace("{out}", str(out))


ATTACKS = [
    Attack("../outside/secret.txt", OUT),
    Attack("src/../../outside/secret.txt", OUT),
    Attack("../../../../../../../../etc/passwd", OUT),
    Attack("{out}/secret.txt", OUT),
    Attack("/etc/passwd", OUT),
    Attack("/proc/self/root/etc/passwd", OUT),
    Attack("/proc/self/cwd/pyproject.toml", OUT),
    Attack("/proc/self/environ", OUT),
    Attack("/dev/zero", OUT),
    Attack("~", OUT),
    Attack("~/.bashrc", OUT),
    Attack("~root/.ssh/id_rsa", OUT),
    Attack("file:///etc/passwd", OUT),
    Attack("file://{out}/secret.txt", OUT),
    Attack("file://localhost/etc/passwd", OUT),
    Attack("file://evil.example/etc/passwd", HOST),
    Attack("http://evil.example/payload", URL),
    Attack("C:\\Windows\\win.ini", WIN),
    Attack("c:/windows/win.ini", WIN),
    Attack("\\\\?\\C:\\Windows\\win.ini", WIN),
    Attack("\\\\server\\share\\secret.txt", WIN),
    Attack("//?/C:/Windows/win.ini", WIN),
    Attack("..\\outside\\secret.txt", OUT),
    Attack("src\\..\\..\\outside\\secret.txt", OUT),
    Attack("link_file", LINK),
    Attack("link_rel", LINK),
    Attack("link_dir", LINK),
    Attack("link_dir/secret.txt", LINK),
    Attack("link_dir/dir/inner.txt", LINK),
    Attack("chain1", LINK),
    Attack("sub/parent_link/inner.txt", LINK),
    Attack("sub/parent_link/../secret.txt", LINK),
    Attack("dangling_out", LINK),
    Attack("proc_link/etc/passwd", LINK),
    Attack("devzero", LINK),
    Attack("src/app.py\x00.txt", NUL),
    Attack("src/app.py\n../../outside/secret.txt", CTRL),
    Attack("src/\x1b[2Japp.py", CTRL),
    Attack("a" * 5000, LONG),
    Attack("/".join(["d"] * 2500), LONG),
    Attack("x" * 300, LONG),
    Attack("loop_a", LOOP),
    Attack("fifo", FIFO),
    Attack("sock", SOCKET),
    Attack("null_device", DEVICE, needs_root=True),
    Attack("{ws}/src/app.py", CONFINED),
    Attack("/proc/self/root{ws}/src/app.py", CONFINED),
    Attack("file://{ws}/src/app.py", CONFINED),
    Attack("./src/./app.py", CONFINED),
    Attack("src//app.py", CONFINED),
    Attack("src\\app.py", CONFINED),
    Attack("chain_in1", CONFINED),
    Attack("sub/../src/app.py", CONFINED),
]

# Special files give list_files nothing to list; the rest are refused by every tool alike.
LIST_SPECIAL = {FIFO, SOCKET, DEVICE, LOOP}


def build(tmp: Path) -> tuple[Path, Path]:
    """(workspace, outside directory) with every planted trap."""
    out = tmp / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "secret.txt").write_text("OUTSIDE-SECRET hello\n")
    (out / "dir" / "inner.txt").write_text("OUTSIDE-INNER hello\n")
    (out / "dir" / "mod.py").write_text("def outside_function():\n    return 'OUTSIDE-DEF hello'\n")
    (out / "hard.txt").write_text("hard link target hello\n")
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "sub").mkdir()
    (ws / "src" / "app.py").write_text(APP)
    (ws / "README.md").write_text("hello readme\n")
    (ws / "link_file").symlink_to(out / "secret.txt")
    (ws / "link_rel").symlink_to("../outside/secret.txt")
    (ws / "link_dir").symlink_to(tmp, target_is_directory=True)
    (ws / "chain1").symlink_to("chain2")
    (ws / "chain2").symlink_to("chain3")
    (ws / "chain3").symlink_to(out / "secret.txt")
    (ws / "chain_in1").symlink_to("chain_in2")
    (ws / "chain_in2").symlink_to("src/app.py")
    (ws / "sub" / "parent_link").symlink_to(out / "dir", target_is_directory=True)
    (ws / "dangling_out").symlink_to(out / "created_by_agent.txt")
    (ws / "proc_link").symlink_to("/proc/self/root", target_is_directory=True)
    (ws / "devzero").symlink_to("/dev/zero")
    (ws / "loop_a").symlink_to("loop_b")
    (ws / "loop_b").symlink_to("loop_a")
    os.link(out / "hard.txt", ws / "hardlink.txt")
    os.mkfifo(ws / "fifo")
    with contextlib.chdir(ws), socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock")  # relative: the absolute path may exceed the 108-byte socket path limit
    if os.geteuid() == 0:
        os.mknod(ws / "null_device", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    return ws, out


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below `directory` with its bytes and mtime."""
    return {
        p.relative_to(directory).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run(ctx: ToolContext, tool: str, arguments: dict) -> ToolResult:
    return asyncio.run(default_registry().execute(tool, arguments, ctx))


def expected_for(tool: str, attack: Attack) -> str:
    """The message every refusal must contain, or CONFINED."""
    if tool == "list_files" and attack.expect in LIST_SPECIAL:
        return "directory not found"
    return attack.expect


def check_confined(tool: str, res: ToolResult, ctx: ToolContext, ws: Path) -> None:
    """What an allowed path must do: act on src/app.py, inside the workspace."""
    changed = ctx.overlay.changed_paths()
    if tool == "read_file":
        assert res.ok and res.output == "1: def greet():\n2:     return 'hello'"
    elif tool == "get_file_info":
        assert res.ok and "path: src/app.py" in res.output
    elif tool == "search_text":
        assert res.ok and res.output == "src/app.py:2:return 'hello'"
    elif tool == "list_files":
        assert not res.ok and "src/app.py: is a file, not a directory" in res.output
    elif tool in ("write_file", "edit_file", "delete_file"):
        assert res.ok and changed == ["src/app.py"], (res.output, changed)
    if tool not in ("write_file", "edit_file", "delete_file"):
        assert changed == []


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: repr(a.path[:40]))
def test_path_attack(tool: str, attack: Attack, tmp_path: Path) -> None:
    if attack.needs_root and os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    ws, out = build(tmp_path)
    before = snapshot(out)
    ctx = ToolContext(root=ws, overlay=Overlay(ws))
    started = time.perf_counter()
    res = run(ctx, tool, {"path": attack.resolve(ws, out), **TOOLS[tool]})
    assert time.perf_counter() - started < 5, "a special file blocked the tool"
    expected = expected_for(tool, attack)
    if expected == CONFINED:
        check_confined(tool, res, ctx, ws)
    else:
        assert not res.ok and res.output.startswith("Error: ") and expected in res.output, res.output
        assert ctx.overlay.changed_paths() == []
    assert not any(marker in res.output for marker in OUTSIDE_MARKERS), res.output
    proposal = ctx.overlay.to_proposal()
    for change in proposal.changes:
        target = os.path.realpath(ws / change.path)
        assert target.startswith(str(ws.resolve()) + os.sep), change.path
    assert not proposal.apply_to_disk(ws)
    assert snapshot(out) == before


HOSTILE_GLOBS = [
    "../*",
    "../../**",
    "/etc/*",
    "**/../../*",
    "link_dir/**",
    "proc_link/**",
    "~/*",
    "**/*",
    "*/*/*",
]


@pytest.mark.parametrize("pattern", HOSTILE_GLOBS)
def test_list_files_patterns_never_leave_the_workspace(pattern: str, tmp_path: Path) -> None:
    ws, _out = build(tmp_path)
    res = run(ToolContext(root=ws, overlay=Overlay(ws)), "list_files", {"pattern": pattern})
    assert res.ok, res.output
    if res.output.startswith("No files match"):
        return
    assert not any(
        name in res.output for name in ("secret.txt", "inner.txt", "mod.py", "passwd", "proc_link/")
    )
    for line in res.output.splitlines():
        assert os.path.realpath(ws / line.rstrip("/")).startswith(str(ws.resolve())), line


@pytest.mark.parametrize("pattern", ["OUTSIDE", "hello", "root:x", "def "])
def test_search_text_over_the_whole_workspace_reads_nothing_outside(pattern: str, tmp_path: Path) -> None:
    ws, _out = build(tmp_path)
    started = time.perf_counter()
    res = run(ToolContext(root=ws, overlay=Overlay(ws)), "search_text", {"pattern": pattern})
    assert time.perf_counter() - started < 5
    assert res.ok and not any(marker in res.output for marker in OUTSIDE_MARKERS), res.output
    files = {line.split(":", 1)[0] for line in res.output.splitlines() if not line.startswith("No matches")}
    assert files <= {"src/app.py", "README.md", "chain_in1", "chain_in2", "hardlink.txt"}, files


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory):
    """The attack workspace with its index refreshed (the walk must not follow any trap)."""
    ws, _out = build(tmp_path_factory.mktemp("indexed"))
    with WorkspaceIndex(ws, IndexConfig(), db_path=ws.parent / "index.db") as index:
        index.refresh()
        yield ws, index


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_code", {"query": "outside_function OUTSIDE-DEF"}),
        ("search_code", {"query": "OUTSIDE-SECRET hello"}),
        ("search_code", {"query": "../outside/secret.txt"}),
        ("search_code", {"query": "/etc/passwd root"}),
        ("find_symbol", {"name": "outside_function"}),
        ("find_symbol", {"name": "../outside/dir/mod.outside_function"}),
        ("find_symbol", {"name": "greet"}),
    ],
)
def test_index_tools_hold_nothing_from_outside(tool: str, arguments: dict, indexed) -> None:
    ws, index = indexed
    res = run(ToolContext(root=ws, overlay=Overlay(ws), index=index), tool, arguments)
    assert res.ok and not any(marker in res.output for marker in OUTSIDE_MARKERS), res.output
    assert "outside_function" not in res.output.replace(arguments.get("name", ""), "")
    if arguments.get("name") == "greet":
        assert "src/app.py:1-2 function greet" in res.output


def test_a_hard_link_reads_as_the_workspace_file_and_applying_a_write_never_reaches_the_other_name(
    tmp_path: Path,
) -> None:
    """A hard link is a workspace entry (the user put it there; no tool makes links): it reads as a file of the
    workspace, and a proposal replaces that entry on apply, so the file's other name keeps its content."""
    ws, out = build(tmp_path)
    ctx = ToolContext(root=ws, overlay=Overlay(ws))
    assert run(ctx, "read_file", {"path": "hardlink.txt"}).output == "1: hard link target hello"
    assert run(ctx, "edit_file", {"path": "hardlink.txt", "old_text": "hello", "new_text": "pwned"}).ok
    assert (out / "hard.txt").read_text() == "hard link target hello\n"  # still only a proposal
    assert not ctx.overlay.to_proposal().apply_to_disk(ws)
    assert (ws / "hardlink.txt").read_text() == "hard link target pwned\n"
    assert (out / "hard.txt").read_text() == "hard link target hello\n"
    assert (out / "hard.txt").stat().st_nlink == 1  # the workspace entry is a new file now


def test_a_write_through_a_link_planted_after_the_proposal_is_refused_on_apply(tmp_path: Path) -> None:
    """The directory of a proposed file becomes an escaping symlink before apply: nothing is written outside."""
    ws, out = build(tmp_path)
    ctx = ToolContext(root=ws, overlay=Overlay(ws))
    assert run(ctx, "write_file", {"path": "later/new.txt", "content": "pwned\n"}).ok
    (ws / "later").symlink_to(out, target_is_directory=True)
    errors = ctx.overlay.to_proposal().apply_to_disk(ws)
    assert errors and LINK in errors[0]
    assert not (out / "new.txt").exists()
