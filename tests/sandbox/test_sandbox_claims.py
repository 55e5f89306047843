"""Every isolation claim a tool result makes, checked on this machine (no bwrap, no Docker engine, root): the
namespace sandbox's home, /tmp, /proc, /dev, /run, capabilities and limits; the refusal where nothing isolates;
the plain NOT-isolated statement when the user allows it; no Docker claim unless a container ran."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted

from lsp_agent.sandbox.isolation import (
    DISABLE_ENV,
    Isolation,
    SandboxUnavailable,
    current_isolation,
    home_exposures,
    user_home,
)
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.settings_sources import load_settings
from lsp_agent.tools.exec_tools import close_sandbox, run_python
from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.workspace.overlay import Overlay

pytestmark = pytest.mark.skipif(
    not current_isolation().namespace, reason="the namespace sandbox does not start here"
)

INSPECT = """
import json, os, resource
def entries(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return exc.strerror
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
limits = {n: resource.getrlimit(getattr(resource, n))[0] for n in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC")}
print(json.dumps({
    "home": os.environ["HOME"], "home_entries": entries(os.environ["HOME"]), "tmp": entries("/tmp"),
    "dev": entries("/dev"), "run": entries("/run"), "pids": [p for p in os.listdir("/proc") if p.isdigit()],
    "caps": [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")],
    "no_new_privs": status["NoNewPrivs"].strip(), "limits": limits, "pid": os.getpid(),
}))
"""


def test_each_line_of_the_result_holds(sandbox: Sandbox, overlay: Overlay, tmp_path: Path) -> None:
    host_tmp = Path("/tmp") / f"lsp-agent-claims-{os.getpid()}"
    host_tmp.write_text("host only")
    try:
        result = sandbox.run([sys.executable, "-c", INSPECT], overlay, timeout=20)
    finally:
        host_tmp.unlink()
    text = result.format(20)
    seen = json.loads(result.stdout)
    home = user_home()
    assert home is not None
    # "home: <home> is a private empty directory for this run (only the Python installation and PATH dirs ...)"
    assert f"home: {home} is a private empty directory for this run" in text
    assert seen["home"] == str(home)
    _, exposed = home_exposures(sandbox.python().needed_paths())
    assert set(seen["home_entries"]) == {p.relative_to(home).parts[0] for p in exposed}
    # "/tmp: private to this run": the host's file is not there
    assert "/tmp: private to this run" in text and host_tmp.name not in seen["tmp"]
    # "processes: own PID namespace ...; /dev holds only ...; /run is empty"
    assert "processes: own PID namespace" in text
    assert str(os.getpid()) not in seen["pids"] and len(seen["pids"]) <= 3 and seen["pid"] <= 3
    assert set(seen["dev"]) == {"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
                                "tty", "urandom", "zero"}  # fmt: skip
    assert seen["run"] == [] and "/run is empty" in text
    # "no capabilities, so the code cannot remount it"
    assert seen["caps"] == ["0000000000000000"] * 5 and seen["no_new_privs"] == "1"
    assert "no capabilities, so the code cannot remount it" in text
    # "limits: 20 s wall clock, 20 s CPU, 512 MiB memory, 256 MiB per file, 256 processes (...)"
    assert "limits: 20 s wall clock, 20 s CPU, 512 MiB memory, 256 MiB per file, 256 processes" in text
    assert seen["limits"] == {
        "RLIMIT_CPU": 20,
        "RLIMIT_AS": 512 * 1024 * 1024,
        "RLIMIT_FSIZE": 256 * 1024 * 1024,
        "RLIMIT_NPROC": 256,
    }
    assert ("(not enforced: running as root)" in text) == (os.geteuid() == 0)


def test_private_places_keep_nothing_on_the_host(sandbox: Sandbox, overlay: Overlay) -> None:
    home, exposed = home_exposures(sandbox.python().needed_paths())
    assert home is not None
    name = f"lsp-agent-claims-{os.getpid()}"
    code = (
        f"import os\nfor d in ('/tmp', {str(home)!r}, '/dev/shm'):\n"
        f"    open(os.path.join(d, {name!r}), 'w').write('private')\n"
        f"    print('wrote', d)\n"
        f"for d in {[str(p) for p in exposed]!r}:\n"
        f"    try:\n        open(os.path.join(d, {name!r}), 'w')\n"
        f"    except OSError as exc:\n        print('python install', exc.strerror)\n"
    )
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    assert result.stdout.count("wrote") == 3, result.format(20)
    assert "python install Permission denied" not in result.stdout
    assert result.stdout.count("python install Read-only file system") == len(exposed)
    for d in (Path("/tmp"), home, Path("/dev/shm")):
        assert not (d / name).exists()
    assert result.changes.is_empty()


def test_tmp_lives_as_long_as_the_interpreter(sandbox: Sandbox, overlay: Overlay) -> None:
    interpreter = sandbox.interpreter(overlay, timeout=20)
    assert interpreter.execute("open('/tmp/kept.txt', 'w').write('step 1')", overlay).ok
    step = interpreter.execute("open('/tmp/kept.txt').read()", overlay)
    assert step.value == repr("step 1")
    assert not Path("/tmp/kept.txt").exists() or Path("/tmp/kept.txt").read_text() != "step 1"


def test_a_workspace_inside_the_hidden_home(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.cwd() / f".lsp-agent-fake-home-{os.getpid()}"  # outside /tmp, which is private anyway
    project = home / "proj"
    (home / ".ssh").mkdir(parents=True)
    project.mkdir()
    try:
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        (project / "main.py").write_text("print('hi')\n")
        monkeypatch.setenv("HOME", str(home))
        overlay = Overlay(project)
        code = f"import os\nprint(sorted(os.listdir({str(home)!r})))\nopen({str(project / 'out.txt')!r}, 'w').write('x')\n"
        with Sandbox(project) as box:
            result = box.run([sys.executable, "-c", code], overlay, timeout=20)
        assert result.stdout.strip() == "['proj']", result.format(20)  # the workspace shows, .ssh does not
        assert overlay.view_text("out.txt") == "x" and not (project / "out.txt").exists()
        assert (
            f"home: {home} is a private empty directory for this run (only the workspace view and, read-only, the "
            "Python installation and PATH directories inside it are visible)" in result.format(20)
        )
    finally:
        shutil.rmtree(home)


@pytest.mark.parametrize("view", ["overlay", "copy"])
def test_secret_files_read_as_empty_read_only_files(project: Path, view: str) -> None:
    (project / ".env").write_text("API_KEY=sk-live-123\n")
    (project / "deploy").mkdir()
    (project / "deploy" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    here = current_isolation()
    isolation = here if view == "overlay" else Isolation(False, False, here.unshare_net, namespace=True)
    code = (
        "for name in ('.env', 'deploy/server.pem', 'notes.txt'):\n"
        "    try:\n        print(name, repr(open(name).read()))\n        open(name, 'a').write('more')\n"
        "    except OSError as exc:\n        print(name, exc.strerror)\n"
    )
    overlay = Overlay(project)
    with Sandbox(project, isolation=isolation, hide=lambda rel: rel.endswith((".env", ".pem"))) as box:
        result = box.run([sys.executable, "-c", code], overlay, timeout=20)
    text = result.format(20)
    assert "sk-live" not in text and "PRIVATE KEY" not in text
    assert "notes.txt 'keep me\\n'" in text
    if view == "overlay":
        assert ".env '' " in text.replace("\n", " ") and "deploy/server.pem ''" in text
        for name in (
            ".env",
            "deploy/server.pem",
        ):  # mode 0444 and a read-only mount: either refusal comes first
            assert f"{name} Permission denied" in text or f"{name} Read-only file system" in text
        assert "secret files: .env, deploy/server.pem read as empty, read-only files" in text
    else:  # the copy leaves secret files out (the walk skips them): code that writes one proposes nothing
        assert (
            ".env No such file or directory" in text and "deploy/server.pem No such file or directory" in text
        )
    assert set(overlay.overrides()) == {"notes.txt"}  # the one file it could append to


def test_code_that_writes_a_secret_file_proposes_nothing_for_it(project: Path) -> None:
    overlay = Overlay(project)
    code = "open('.env.local', 'w').write('TOKEN=x'); open('new.txt', 'w').write('ok')"
    with Sandbox(project, hide=lambda rel: rel.startswith(".env")) as box:
        result = box.run([sys.executable, "-c", code], overlay, timeout=20)
    assert set(overlay.overrides()) == {"new.txt"}
    assert ".env.local: a secret file (secretFiles); changes to it are not proposed" in result.format(20)
    assert not (project / ".env.local").exists()


def test_exec_tools_hide_the_default_and_configured_secret_files(project: Path) -> None:
    (project / ".env").write_text("API_KEY=sk-live-123\n")
    (project / "vault.txt").write_text("hunter2-hunter2\n")
    settings, _ = load_settings(project, client={"secretFiles": ["vault.txt"]}, environ={})
    ctx = ToolContext(root=project, overlay=Overlay(project), settings=settings)
    try:
        text = run_python(ctx, "print(repr(open('.env').read()), repr(open('vault.txt').read()))")
    finally:
        close_sandbox(ctx)
    assert "sk-live" not in text and "hunter2" not in text
    assert "'' ''" in text and "secret files: .env, vault.txt read as empty, read-only files" in text


# ----- no mechanism: refuse, or say plainly that nothing is isolated ---------------------------------------------


@pytest.fixture
def nothing_isolates(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as if it had neither bubblewrap nor usable namespaces."""
    monkeypatch.setenv(DISABLE_ENV, "bwrap,unshare")
    assert not current_isolation().isolated


def test_exec_tools_refuse_and_say_what_to_install(project: Path, nothing_isolates: None) -> None:
    ctx = ToolContext(root=project, overlay=Overlay(project))
    with pytest.raises(ToolError) as caught:
        run_python(ctx, f"open({str(project / 'notes.txt')!r}, 'w').write('changed')")
    close_sandbox(ctx)
    message = str(caught.value)
    assert "apt-get install bubblewrap" in message
    assert "sysctl kernel.unprivileged_userns_clone=1" in message
    assert "allowUnisolatedExec" in message and "LSP_AGENT_ALLOW_UNISOLATED_EXEC=1" in message
    assert (project / "notes.txt").read_text() == "keep me\n"
    with Sandbox(project) as box, pytest.raises(SandboxUnavailable):
        box.interpreter(Overlay(project), timeout=20)


async def test_codeact_refuses_too(project: Path, nothing_isolates: None) -> None:
    script = [
        {"content": json.dumps({"thought": "t", "action": "execute_code", "code": "print('ran')"})},
        {
            "content": json.dumps(
                {"thought": "t", "action": "provide_answer", "final_answer": "could not run"}
            )
        },
    ]
    out = await run_scripted(project, script, "run it", style="codeact", permission=asker("session"))
    results = out.of("tool_result")
    assert results and not results[0]["ok"]
    assert "apt-get install bubblewrap" in results[0]["output"] and "ran" not in results[0]["output"]


def test_allowed_unisolated_execution_says_so_plainly(project: Path, nothing_isolates: None) -> None:
    ctx = ToolContext(root=project, overlay=Overlay(project), settings=load_settings(
        project, environ={"LSP_AGENT_ALLOW_UNISOLATED_EXEC": "1"})[0])  # fmt: skip
    try:
        out = run_python(ctx, f"open({str(project / 'unprotected.txt')!r}, 'w').write('real')")
    finally:
        close_sandbox(ctx)
        changed = (project / "unprotected.txt").exists()
        (project / "unprotected.txt").unlink(missing_ok=True)
    assert changed  # the claim below is the truth: the code reached the real workspace
    assert f"your real files in {project} are NOT protected" in out
    assert "filesystem: NOT isolated" in out and "your real home directory is NOT hidden" in out
    assert "untouched" not in out and "private to this run" not in out


def test_allow_unisolated_exec_setting_sources(tmp_path: Path) -> None:
    assert load_settings(tmp_path, environ={})[0].allow_unisolated_exec is False
    assert load_settings(tmp_path, environ={"LSP_AGENT_ALLOW_UNISOLATED_EXEC": "true"})[
        0
    ].allow_unisolated_exec
    settings, errors = load_settings(tmp_path, environ={}, client={"lspAgent": {"allowUnisolatedExec": True}})
    assert settings.allow_unisolated_exec and not errors
    settings, errors = load_settings(tmp_path, environ={}, client={"allowUnisolatedExec": "maybe"})
    assert not settings.allow_unisolated_exec and "allow_unisolated_exec" in errors[0]


# ----- Docker: claimed only when a container ran ----------------------------------------------------------------


def test_docker_without_an_engine_runs_in_the_namespace_sandbox(
    project: Path, overlay: Overlay, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_AGENT_SANDBOX_BACKEND", "docker")
    with Sandbox(project) as box:
        assert not box.use_docker
        result = box.run(
            [sys.executable, "-c", f"open({str(project / 'x.txt')!r}, 'w').write('x')"], overlay, timeout=20
        )
    text = result.format(20)
    assert "container: Docker" not in text and "using the local sandbox" in text
    assert "network: cut off (own network namespace with only loopback)" in text
    assert not (project / "x.txt").exists() and overlay.view_text("x.txt") == "x"


async def test_codeact_with_a_reachable_engine_does_not_claim_a_container(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The persistent interpreter always runs locally: with an engine reported reachable the result says so."""
    import lsp_agent.sandbox.session as session

    monkeypatch.setenv("LSP_AGENT_SANDBOX_BACKEND", "docker")
    monkeypatch.setattr(session, "docker_status", lambda: (True, "docker backend: engine 27.0 reachable"))
    code = "import os\nprint('pid', os.getpid(), [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapBnd')])"
    script = [
        {"content": json.dumps({"thought": "t", "action": "execute_code", "code": code})},
        {"content": json.dumps({"thought": "t", "action": "provide_answer", "final_answer": "done"})},
    ]
    out = await run_scripted(project, script, "run it", style="codeact", permission=asker("session"))
    output = out.of("tool_result")[0]["output"]
    assert "container: Docker" not in output
    assert "but this code ran in the local sandbox above, not in a container" in output
    assert "network: cut off (own network namespace with only loopback)" in output
    assert "pid 1 ['0000000000000000']" in output  # it really ran in the namespace sandbox (no capabilities)
