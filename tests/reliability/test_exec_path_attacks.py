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

from lsp_agent.sandbox.isolation import current_isolation  # noqa: E402
from lsp_agent.tools.exec_tools import close_sandbox, run_command, run_python, run_tests, sandbox_for  # noqa: E402
from lsp_agent.tools.registry import ToolContext, ToolError  # noqa: E402

pytestmark = pytest.mark.skipif(
    not current_isolation().namespace,
    reason="needs the namespace sandbox (this suite's target machine has it)",
)

# (case id, path template, where it must land in the proposal or None: it must only stay contained, mode)
W, A = "w", "a"  # write a new file / open an existing one for appending nothing
TARGETS: list[tuple[str, str, str | None, str]] = [
    ("ws-absolute", "{ws}/attack.txt", "attack.txt", W),
    ("ws-dotdot", "{ws}/pkg/../../{wsname}/attack.txt", "attack.txt", W),
    ("ws-dotdot-root", "{ws}/../../../../../../../../..{ws}/attack.txt", "attack.txt", W),
    ("ws-double-slash", "{ws}//pkg//attack.txt", "pkg/attack.txt", W),
    ("ws-relative", "pkg/attack.txt", "pkg/attack.txt", W),
    ("ws-existing-file", "{ws}/notes.txt", "notes.txt", W),
    ("proc-self-root", "/proc/self/root{ws}/attack.txt", "attack.txt", W),
    ("proc-thread-self-root", "/proc/thread-self/root{ws}/attack.txt", "attack.txt", W),
    ("proc-self-cwd", "/proc/self/cwd/attack.txt", "attack.txt", W),
    ("proc-1-root", "/proc/1/root{ws}/attack.txt", "attack.txt", W),
    ("proc-1-cwd", "/proc/1/cwd/attack.txt", "attack.txt", W),
    ("host-link-to-ws", "{far}/ws-link/attack.txt", "attack.txt", W),
    ("planted-link-inside", "{ws}/link-inside.txt", "notes.txt", W),
    ("planted-hardlink", "{ws}/hardlink.txt", "hardlink.txt", W),
    ("planted-link-far", "{ws}/link-far.txt", None, W),
    ("planted-link-out", "{ws}/link-out.txt", None, W),
    ("planted-linkdir", "{ws}/linkdir/new.txt", None, W),
    ("planted-linkdir-deep", "{ws}/linkdir/sub/deeper/new.txt", None, W),
    ("planted-chain", "{ws}/chain1", None, A),
    ("planted-rel-up", "{ws}/up/etc/lsp-agent-attack-{id}", None, W),
    ("planted-procroot", "{ws}/procroot/etc/lsp-agent-attack-{id}", None, W),
    ("outside-tmp-existing", "{out}/secret.txt", None, A),
    ("outside-tmp-new", "{out}/new.txt", None, W),
    ("outside-far-existing", "{far}/target.txt", None, A),
    ("outside-far-new", "{far}/new.txt", None, W),
    ("dotdot-relative-out", "../outside/new.txt", None, W),
    ("dotdot-relative-etc", "../../../../../../../../etc/lsp-agent-attack-{id}", None, W),
    ("etc-new", "/etc/lsp-agent-attack-{id}", None, W),
    ("etc-passwd", "/etc/passwd", None, A),
    ("usr-new", "/usr/lsp-agent-attack-{id}", None, W),
    ("usr-local-bin", "/usr/local/bin/lsp-agent-attack-{id}", None, W),
    ("root-dir", "/lsp-agent-attack-{id}", None, W),
    ("var-tmp", "/var/tmp/lsp-agent-attack-{id}", None, W),
    ("tmp", "/tmp/lsp-agent-attack-{id}", None, W),
    ("dev-shm", "/dev/shm/lsp-agent-attack-{id}", None, W),
    ("run", "/run/lsp-agent-attack-{id}", None, W),
    ("home", "{home}/lsp-agent-attack-{id}", None, W),
    ("home-ssh", "{home}/.lsp-agent-attack-{id}/authorized_keys", None, W),
    ("sys", "/sys/kernel/lsp-agent-attack-{id}", None, W),
    ("proc-sys", "/proc/sys/kernel/hostname", None, A),
    ("proc-sysrq", "/proc/sysrq-trigger", None, A),
    ("proc-self-root-etc", "/proc/self/root/etc/lsp-agent-attack-{id}", None, W),
    ("proc-1-root-tmp", "/proc/1/root/tmp/lsp-agent-attack-{id}", None, W),
    ("proc-host-pid-root", "/proc/{hostpid}/root{ws}/attack.txt", None, W),
    ("dev-block", "/dev/vda", None, A),
    ("dev-mem", "/dev/mem", None, A),
    ("scratch-upper", "{upper}/injected.txt", None, W),
    ("scratch-staging", "{staging}/pkg/calc.py", None, W),
    ("windows-backslash", "..\\..\\attack.txt", None, W),
    ("windows-drive", "C:\\Windows\\attack.txt", None, W),
    ("windows-unc", "\\\\?\\C:\\attack.txt", None, W),
    ("file-url-ws", "file://{ws}/attack.txt", None, W),
    ("file-url-etc", "file:///etc/lsp-agent-attack-{id}", None, W),
    ("tilde-literal", "~/lsp-agent-attack-{id}", None, W),
    ("tilde-user", "~root/lsp-agent-attack-{id}", None, W),
    ("long-name", "{ws}/" + "a" * 300, None, W),
    ("long-path", "{ws}/" + "d/" * 2100 + "x", None, W),
    ("nul-inside", "{ws}/a\0b", None, W),
    ("nul-outside", "/etc/lsp-agent-attack\0x", None, W),
]
TOOLS = ["run_python", "run_command", "codeact"]


@pytest.fixture
def arena(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Arena]:
    """A fresh arena per case; removes whatever an escape left behind (there should be nothing)."""
    made = build_arena(tmp_path, request.node.callspec.id.replace("[", "-").replace("]", "")[:40])
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
