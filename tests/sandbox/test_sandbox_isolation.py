"""Isolation: timeouts kill the group, limits cap memory, secrets stay out, writes and network are cut off."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

import pytest

from lsp_agent.sandbox.environment import is_secret_name
from lsp_agent.sandbox.output import truncate_middle
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.workspace.overlay import Overlay


def test_infinite_loop_is_killed_at_the_wall_clock_timeout(sandbox: Sandbox, overlay: Overlay) -> None:
    code = "import subprocess, sys\nsubprocess.Popen(['sleep', '300'])\nprint('looping', flush=True)\nwhile True: pass\n"
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=1.5)
    assert result.timed_out
    assert 1.4 < result.seconds < 6
    assert "looping" in result.stdout  # output produced before the kill still comes back
    assert "killed: wall-clock timeout of 1.5 s" in result.format(1.5)


def test_memory_bomb_is_capped(sandbox: Sandbox, overlay: Overlay) -> None:
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))\n"
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr
    assert "512 MiB memory" in result.format(20)


def test_secrets_are_absent_from_the_child_environment(
    sandbox: Sandbox, overlay: Overlay, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "LSP_AGENT_API_KEY": "k1",
        "OPENAI_API_KEY": "k2",
        "GITHUB_TOKEN": "k3",
        "MY_APP_SECRET": "k4",
        "DB_PASSWORD": "k5",
        "AWS_ACCESS_KEY_ID": "k6",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    code = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    import json

    env = json.loads(result.stdout)
    assert not set(secrets) & set(env)
    assert not any(v in secrets.values() for v in env.values())
    assert env["HARMLESS_SETTING"] == "visible"
    if sandbox.isolation.namespace:  # the real home path, replaced by a private directory; /tmp private
        assert env["HOME"] == sandbox._plan.home and env["TMPDIR"] == "/tmp"
    else:
        assert env["HOME"].startswith(str(sandbox.scratch.base))
    assert "secrets removed" in result.format(20)


def test_secret_names() -> None:
    assert all(is_secret_name(n) for n in ("ANTHROPIC_API_KEY", "hf_token", "AWS_REGION", "PGPASSWORD"))
    assert not any(is_secret_name(n) for n in ("PATH", "LANG", "TOKENIZERS_PARALLELISM", "KEYBOARD"))


def test_writes_outside_the_scratch_copy(sandbox: Sandbox, overlay: Overlay, project: Path) -> None:
    # The real workspace by its absolute path, and a host directory outside /tmp and home (the checkout may lie
    # under /tmp, which the sandbox makes private, so it is no place to test the read-only root).
    inside, outside = project / "escaped.txt", Path("/var/tmp") / f".lsp-agent-escape-test-{os.getpid()}"
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        open(path, 'w').write('escaped')\n"
        "        print('WROTE', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', path, exc.strerror)\n"
    )
    try:
        result = sandbox.run([sys.executable, "-c", code, str(inside), str(outside)], overlay, timeout=20)
        escaped = [t for t in (inside, outside) if t.exists()]
    finally:
        for t in (inside, outside):
            t.unlink(missing_ok=True)
    text = result.format(20)
    assert not escaped, text
    assert f"WROTE {inside}" in result.stdout  # the view at the workspace's own path took the write ...
    assert overlay.view_text("escaped.txt") == "escaped"  # ... and it joined the proposal
    assert "escaped.txt (created)" in text
    assert f"refused {outside} Read-only file system" in result.stdout
    assert (
        "filesystem: everything outside the workspace view, /tmp and the home directory is read-only" in text
    )
    assert "your real files are untouched" in text


def test_network_is_cut_off(sandbox: Sandbox, overlay: Overlay) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        code = (
            "import socket\ns = socket.socket()\ns.settimeout(2)\n"
            f"print('connect', s.connect_ex(('127.0.0.1', {port})))\n"
            "inner = socket.socket(); inner.bind(('127.0.0.1', 0)); inner.listen(1)\n"
            "print('loopback', socket.create_connection(inner.getsockname(), timeout=2).getpeername()[0])\n"
        )
        result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    assert "connect 0" not in result.stdout and "connect " in result.stdout, result.format(20)
    assert "loopback 127.0.0.1" in result.stdout  # its own loopback works (servers in tests)
    assert "network: cut off (own network namespace with only loopback)" in result.format(20)


def test_long_output_is_cut_with_a_marker(sandbox: Sandbox, overlay: Overlay) -> None:
    code = "print('start'); print('x' * 500_000); print('end')"
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    text = result.format(20, max_chars=4000)
    assert "start" in text and "end" in text
    assert "characters cut" in text or "bytes of output cut" in text
    assert len(text) < 6000


def test_truncate_middle_keeps_both_ends() -> None:
    text = "a" * 100 + "b" * 100
    cut = truncate_middle(text, 50)
    assert cut.startswith("a" * 25) and cut.endswith("b" * 25)
    assert "150 characters cut" in cut


def test_missing_program_is_a_clear_result(sandbox: Sandbox, overlay: Overlay) -> None:
    result = sandbox.run(["definitely-not-a-program-here"], overlay, timeout=10)
    assert not result.ok
    text = result.format(10)
    assert "definitely-not-a-program-here" in text


def test_docker_backend_falls_back_and_says_why(
    project: Path, overlay: Overlay, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_agent.sandbox.docker_backend import docker_status

    monkeypatch.setenv("LSP_AGENT_SANDBOX_BACKEND", "docker")
    reachable, note = docker_status()
    if reachable:
        pytest.skip("a Docker engine is reachable here; the fallback path is not exercised")
    assert note.startswith("docker backend: ")
    with Sandbox(project) as box:
        result = box.run([sys.executable, "-c", "print('ran locally')"], overlay, timeout=20)
    assert result.stdout.strip() == "ran locally"
    assert "using the local sandbox" in result.format(20)


def test_home_is_hidden_but_python_still_runs(
    sandbox: Sandbox, overlay: Overlay, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path.cwd() / f".lsp-agent-fake-home-{os.getpid()}"  # outside /tmp, which is private anyway
    (home / ".ssh").mkdir(parents=True)
    try:
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        monkeypatch.setenv("HOME", str(home))
        code = f"import os\nprint(sorted(os.listdir({str(home)!r})) if os.path.isdir({str(home)!r}) else 'gone')\n"
        result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    finally:
        shutil.rmtree(home)
    assert result.exit_code == 0, result.format(20)
    assert result.stdout.strip() == "[]"
    assert f"home: {home} is a private empty directory for this run" in result.format(20)


def test_src_layout_imports_the_proposed_code(project: Path, overlay: Overlay) -> None:
    (project / "src" / "lib").mkdir(parents=True)
    (project / "src" / "lib" / "__init__.py").write_text("VERSION = 1\n")
    overlay.write_text("src/lib/__init__.py", "VERSION = 2\n")
    with Sandbox(project) as box:
        result = box.run([sys.executable, "-c", "import lib; print(lib.VERSION)"], overlay, timeout=20)
    assert result.stdout.strip() == "2"
