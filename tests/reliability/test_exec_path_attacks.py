"""Path attacks through the exec tools (run_python, run_command, run_tests, the CodeAct interpreter): code that
writes through .., absolute paths, /proc/self/root, planted and self-made symlinks (files, dirs, chains), hard
links, devices, FIFOs, NUL, file:// and Windows forms, ~ and very long paths. 0 escapes: the real workspace and
every place outside the run's private view stay byte-for-byte as they were, and what reaches the workspace path
only ever joins the proposal."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from exec_attack_arena import ATTEMPT, SECRET, SH_ATTEMPT, Arena, build_arena  # noqa: E402
from exec_attack_cases import SELF_MADE, TARGETS, UNDO  # noqa: E402

from lsp_agent.sandbox.isolation import Isolation, current_isolation  # noqa: E402
from lsp_agent.sandbox.session import Sandbox  # noqa: E402
from lsp_agent.tools.exec_tools import close_sandbox, run_command, run_python, run_tests, sandbox_for  # noqa: E402
from lsp_agent.tools.registry import ToolContext, ToolError  # noqa: E402

pytestmark = pytest.mark.skipif(
    not current_isolation().namespace,
    reason="needs the namespace sandbox (this suite's target machine has it)",
)

TOOLS = ["run_python", "run_command", "codeact"]


@pytest.fixture
def arena(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Arena]:
    """A fresh arena per case; removes whatever an escape left behind (there should be nothing)."""
    callspec = getattr(request.node, "callspec", None)
    made = build_arena(tmp_path, (callspec.id if callspec else request.node.name)[:40])
    yield made
    made.cleanup()


def _attack(arena: Arena, ctx: ToolContext, tool: str, path: str, mode: str) -> str:
    """Run one write attempt through `tool`; the tool's whole observation (a ToolError's message included)."""
    try:
        if tool == "run_python":
            return run_python(ctx, ATTEMPT + f"attempt({path!r}, {arena.case!r}, {mode!r})\n")
        if tool == "run_command":
            return run_command(ctx, ["sh", "-c", SH_ATTEMPT, "sh", path, arena.case, mode])
        interpreter = sandbox_for(ctx).interpreter(ctx.overlay, timeout=20)
        assert interpreter.execute(ATTEMPT, ctx.overlay).ok
        return interpreter.execute(f"attempt({path!r}, {arena.case!r}, {mode!r})", ctx.overlay).format(20)
    except ToolError as exc:
        return f"ToolError: {exc}"
    finally:
        close_sandbox(ctx)


def _watched(path: str) -> list[str]:
    """The path as given, with ~ expanded, and resolved on the host (where an escape would land)."""
    if "\0" in path:
        return [path.split("\0")[0]]
    try:
        resolved = str(Path(path).resolve())
    except OSError:  # e.g. /proc/1/root of a process we may not inspect
        resolved = path
    return [path, os.path.expanduser(path), resolved]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(("name", "template", "lands", "mode"), TARGETS, ids=[t[0] for t in TARGETS])
def test_write_attack(
    arena: Arena, tool: str, name: str, template: str, lands: str | None, mode: str
) -> None:
    ctx = arena.context()
    scratch = sandbox_for(ctx).scratch  # the very sandbox the attack runs in: its upper and staging dirs
    path = template.format(**arena.values(upper=str(scratch.upper), staging=str(scratch.staging)))
    arena.watch(*_watched(path))
    output = _attack(arena, ctx, tool, path, mode)
    assert arena.escapes() == [], output
    proposal = ctx.overlay.overrides()
    for rel in proposal:
        assert not rel.startswith(("/", "../")) and "/../" not in rel, (rel, output)
    if lands is not None:
        assert "WROTE" in output, output
        assert proposal.get(lands) == arena.case, (proposal, output)
    else:
        assert all(proposal.get(rel) != arena.case for rel in ("notes.txt", "pkg/calc.py")), output
    assert SECRET not in output


# ----- run_tests: the attack sits in a test module of the workspace -----------------------------------------

RUN_TESTS_TARGETS = [t for t in TARGETS if t[2] is not None or t[0] in {
    "planted-link-far", "planted-linkdir", "planted-chain", "planted-rel-up", "outside-tmp-existing",
    "outside-far-new", "etc-new", "etc-passwd", "usr-local-bin", "root-dir", "tmp", "dev-shm", "home",
    "proc-self-root-etc", "dev-block", "scratch-upper", "nul-outside", "long-path",
}]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "template", "lands", "mode"), RUN_TESTS_TARGETS, ids=[t[0] for t in RUN_TESTS_TARGETS]
)
def test_run_tests_attack(
    arena: Arena, name: str, template: str, lands: str | None, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the attack needs no plugins: faster
    (arena.ws / "test_attack.py").write_text(
        ATTEMPT + "import json, sys\n\ndef test_attack():\n"
        "    attempt(json.load(open('attack.json'))['path'], 'ATTACK-FROM-TEST', json.load(open('attack.json'))['mode'])\n"
    )
    ctx = arena.context()
    scratch = sandbox_for(ctx).scratch
    path = template.format(**arena.values(upper=str(scratch.upper), staging=str(scratch.staging)))
    import json

    (arena.ws / "attack.json").write_text(json.dumps({"path": path, "mode": mode}))
    arena.watch(*_watched(path))
    try:
        output = run_tests(ctx, ["-s", "test_attack.py"])
    finally:
        close_sandbox(ctx)
    assert arena.escapes() == [], output
    assert "1 passed" in output, output
    proposal = ctx.overlay.overrides()
    if lands is not None:
        assert "WROTE" in output and proposal.get(lands) == "ATTACK-FROM-TEST", (proposal, output)
    assert SECRET not in output


# ----- links and special files the code makes itself ----------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("name", sorted(SELF_MADE))
def test_self_made_link_attack(arena: Arena, tool: str, name: str) -> None:
    python, shell = (part.format(**arena.values()) for part in SELF_MADE[name])
    ctx = arena.context()
    arena.watch("/etc/lsp-agent-attack", "/tmp/vda", f"{arena.far}/new.txt")
    if tool == "run_command":
        output = _run_command(ctx, ["sh", "-c", shell])
    else:
        code = (
            ATTEMPT
            + "try:\n"
            + "".join(f"    {line}\n" for line in python.split("; "))
            + (
                "except (OSError, ValueError) as exc:\n    print('REFUSED', type(exc).__name__, exc.strerror)\n"
            )
        )
        output = _run_python_or_codeact(ctx, tool, code)
    assert arena.escapes() == [], output
    assert "WROTE" not in output, output
    assert SECRET not in output
    proposal = ctx.overlay.overrides()
    # Only regular text files join a proposal: never a link, device or FIFO, never an outside file's bytes.
    assert set(proposal) <= {
        "pkg/__init__.py",
        "pkg/calc.py",
        "notes.txt",
        "a",
        "b",
        "c",
        "evil",
        "hl",
        "pipe",
    }
    assert all(text in (None, "") for text in proposal.values()), proposal


def _run_command(ctx: ToolContext, argv: list[str]) -> str:
    try:
        return run_command(ctx, argv)
    finally:
        close_sandbox(ctx)


def _run_python_or_codeact(ctx: ToolContext, tool: str, code: str) -> str:
    try:
        if tool == "run_python":
            return run_python(ctx, code)
        return sandbox_for(ctx).interpreter(ctx.overlay, timeout=20).execute(code, ctx.overlay).format(20)
    finally:
        close_sandbox(ctx)


# ----- undoing the sandbox: remounts, new namespaces, chroot ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNDO))
def test_sandbox_cannot_be_undone(arena: Arena, name: str) -> None:
    undo = UNDO[name].format(**arena.values())
    script = (
        f"if {undo} >/dev/null 2>&1; then echo UNDONE; fi; "
        f"(printf x > /etc/lsp-agent-attack && echo WROTE) 2>/dev/null; "
        f"(printf x > {arena.far}/new.txt && echo WROTE) 2>/dev/null; cat {arena.out}/secret.txt 2>/dev/null; "
        "echo done"
    )
    arena.watch("/etc/lsp-agent-attack", "/mnt")
    ctx = arena.context()
    output = _run_command(ctx, ["sh", "-c", script])
    assert arena.escapes() == [], output
    assert "done" in output and "UNDONE" not in output and "WROTE" not in output, output
    assert SECRET not in output
    assert set(ctx.overlay.overrides()) <= {"lsp-agent-attack"}


# ----- races and leftovers ---------------------------------------------------------------------------------------


def test_symlink_swapped_in_while_the_host_collects(arena: Arena) -> None:
    """A thread flips race.txt between a regular file and a link to an outside secret while the host reads."""
    ctx = arena.context()
    arena.watch()
    flipper = (
        "import os, threading\n"
        "flips = 0\n"
        "def flip():\n"
        "    global flips\n"
        "    while True:\n"
        "        flips += 1\n"
        "        with open('race.tmp', 'w') as f: f.write('benign')\n"
        "        os.replace('race.tmp', 'race.txt')\n"
        f"        os.symlink({str(arena.far / 'target.txt')!r}, 'race.lnk')\n"
        "        os.replace('race.lnk', 'race.txt')\n"
        "threading.Thread(target=flip, daemon=True).start()\n"
    )
    try:
        interpreter = sandbox_for(ctx).interpreter(ctx.overlay, timeout=20)
        assert interpreter.execute(flipper, ctx.overlay).ok
        seen = set()
        for _ in range(60):
            interpreter.execute("pass", ctx.overlay)
            seen.add(ctx.overlay.overrides().get("race.txt"))
        flips = interpreter.execute("flips", ctx.overlay).value
    finally:
        close_sandbox(ctx)
    assert arena.escapes() == []
    assert not any(SECRET in (text or "") for text in ctx.overlay.overrides().values())
    assert seen <= {None, "benign"}
    assert int(flips or 0) > 100  # the link really was swapped in and out while the host collected


def test_background_processes_die_with_the_run(arena: Arena) -> None:
    marker = f"lsp-agent-orphan-{os.getpid()}"
    ctx = arena.context()
    code = f"import subprocess\nsubprocess.Popen(['sh', '-c', 'exec -a {marker} sleep 300'], start_new_session=True)\n"
    _run_python_or_codeact(ctx, "run_python", code)
    leftovers = []
    for entry in Path("/proc").iterdir():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                leftovers.append(entry.name)
        except OSError:
            continue
    assert leftovers == []


def test_copy_view_never_writes_through_a_planted_parent_link(arena: Arena) -> None:
    """Copy view: the code makes pkg a link to an outside dir; the agent's next edit of pkg/calc.py stays inside."""
    arena.watch()
    here = current_isolation()
    copy_view = Isolation(overlay=False, bwrap=False, unshare_net=here.unshare_net, namespace=True)
    with Sandbox(arena.ws, isolation=copy_view) as box:
        overlay = arena.context().overlay
        planted = box.run(["sh", "-c", f"rm -rf pkg && ln -s {arena.far} pkg"], overlay, timeout=20)
        assert planted.ok and (box.scratch.workspace / "pkg").is_symlink(), planted.format(20)
        overlay.write_text("pkg/calc.py", "EDITED BY THE AGENT\n")
        result = box.run(["cat", "pkg/calc.py"], overlay, timeout=20)
    assert arena.escapes() == []
    assert not (arena.far / "calc.py").exists()
    assert result.stdout == "EDITED BY THE AGENT\n", result.format(20)
