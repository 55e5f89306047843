"""The scratch copy: shows the overlay, turns the code's file changes into overlay writes, never touches disk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sandbox_helpers import snapshot

from lsp_agent.sandbox.session import Sandbox
from lsp_agent.workspace.overlay import Overlay


def test_code_sees_proposed_edits_and_its_writes_join_the_overlay(
    sandbox: Sandbox, overlay: Overlay, project: Path
) -> None:
    before = snapshot(project)
    overlay.write_text("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    overlay.write_text("pkg/extra.py", "VALUE = 7\n")
    overlay.delete("notes.txt")
    code = (
        "import os, pathlib\n"
        "from pkg.calc import add\n"
        "from pkg.extra import VALUE\n"
        "print('sum', add(2, 3), VALUE, os.path.exists('notes.txt'))\n"
        "pathlib.Path('pkg/generated.py').write_text('X = 1\\n')\n"
        "pathlib.Path('tests/test_calc.py').write_text('# rewritten\\n')\n"
        "os.remove('pkg/__init__.py')\n"
        "os.makedirs('build', exist_ok=True); open('build/out.bin', 'wb').write(b'ignored')\n"
        "os.makedirs('__pycache__', exist_ok=True); open('__pycache__/x.pyc', 'wb').write(b'junk')\n"
    )
    result = sandbox.run([sys.executable, "-c", code], overlay, timeout=20)
    assert result.exit_code == 0, result.format(20)
    assert "sum 5 7 False" in result.stdout
    assert sorted(result.changes.created) == ["pkg/generated.py"]
    assert result.changes.written == ["tests/test_calc.py"]
    assert result.changes.deleted == ["pkg/__init__.py"]
    assert overlay.read_text("pkg/generated.py") == "X = 1\n"
    assert overlay.read_text("tests/test_calc.py") == "# rewritten\n"
    assert not overlay.exists("pkg/__init__.py")
    assert not overlay.exists("build/out.bin")  # gitignored output stays out of the proposal
    assert "pkg/generated.py (created)" in result.format(20)
    assert snapshot(project) == before  # the real workspace is untouched


def test_later_runs_see_earlier_changes_and_new_overlay_edits(
    sandbox: Sandbox, overlay: Overlay, project: Path
) -> None:
    first = sandbox.run([sys.executable, "-c", "open('state.txt', 'w').write('one')"], overlay, timeout=20)
    assert first.changes.created == ["state.txt"]
    overlay.write_text("state.txt", "two")  # the agent edits the file the code wrote
    second = sandbox.run([sys.executable, "-c", "print(open('state.txt').read())"], overlay, timeout=20)
    assert second.stdout.strip() == "two"
    assert second.changes.is_empty()
    overlay.revert("state.txt")
    third = sandbox.run(
        [sys.executable, "-c", "import os; print(os.path.exists('state.txt'))"], overlay, timeout=20
    )
    assert third.stdout.strip() == "False"
    assert not (project / "state.txt").exists()


def test_scratch_copy_is_removed_on_close(project: Path, overlay: Overlay) -> None:
    box = Sandbox(project)
    box.run(["true"], overlay, timeout=10)
    base = box.scratch.base
    assert base.is_dir()
    box.close()
    assert not base.exists()


def test_binary_output_is_reported_not_proposed(sandbox: Sandbox, overlay: Overlay) -> None:
    result = sandbox.run(
        [sys.executable, "-c", "open('blob.dat', 'wb').write(bytes(range(256)))"], overlay, timeout=20
    )
    assert any(s.startswith("blob.dat: binary file") for s in result.changes.skipped)
    assert not overlay.exists("blob.dat")
    assert "NOT added to the proposal" in result.format(20)


def test_a_refused_overlay_mount_falls_back_to_a_copy(project: Path, overlay: Overlay) -> None:
    import os
    import tempfile

    from lsp_agent.sandbox.isolation import current_isolation

    if not current_isolation().overlay:
        pytest.skip("no overlay mount on this machine")
    other_fs = Path("/dev/shm")
    with Sandbox(project) as box:
        scratch = box.scratch
        if not other_fs.is_dir() or os.stat(other_fs).st_dev == os.stat(scratch.base).st_dev:
            pytest.skip("needs /dev/shm on another filesystem than the scratch copy")
        # A work dir on another filesystem than the upper dir: the kernel refuses the mount.
        scratch.work.rmdir()
        elsewhere = Path(tempfile.mkdtemp(dir=other_fs))
        scratch.work.symlink_to(elsewhere)
        try:
            overlay.write_text("pkg/calc.py", "def add(a, b):\n    return a + b\n")
            result = box.run(
                [sys.executable, "-c", "from pkg.calc import add; print(add(2, 3))"], overlay, timeout=20
            )
            interp = box.interpreter(overlay, timeout=10).execute("print('alive')", overlay)
        finally:
            elsewhere.rmdir()
        assert result.stdout.strip() == "5", result.format(20)
        assert box.scratch.mode == "copy"
        assert interp.stdout.strip() == "alive"


def test_the_code_runs_against_the_unsaved_buffers_the_agent_read(
    sandbox: Sandbox, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor's unsaved text (the overlay's read hook) is what the sandbox runs, not the file on disk."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the tiny project needs no plugins: faster
    before = snapshot(project)
    buffers = {project / "pkg" / "calc.py": "def add(a, b):\n    return a + b  # unsaved\n"}

    def read_buffer_or_disk(path: Path) -> str:
        return buffers[path] if path in buffers else path.read_text(encoding="utf-8")

    overlay = Overlay(project, read_disk=read_buffer_or_disk)
    tests = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    unseen = sandbox.run(tests, overlay, timeout=60)
    assert "1 failed" in unseen.stdout  # the agent has not read calc.py: the disk text runs
    assert "unsaved" in overlay.read_text("pkg/calc.py")
    seen = sandbox.run(tests, overlay, timeout=60)
    assert "1 passed" in seen.stdout, seen.format(60)
    assert seen.changes.is_empty() and overlay.changed_paths() == []  # a buffer is not a proposed edit
    # the user saves the buffer (the disk now holds it), then undoes that save: the agent's read text wins
    (project / "pkg" / "calc.py").write_text(buffers[project / "pkg" / "calc.py"])
    assert "1 passed" in sandbox.run(tests, overlay, timeout=60).stdout
    (project / "pkg" / "calc.py").write_bytes(before["pkg/calc.py"])
    assert "1 passed" in sandbox.run(tests, overlay, timeout=60).stdout
    # an edit of the buffered file builds on the buffer text; a revert shows the buffer text again
    overlay.write_text("pkg/calc.py", "def add(a, b):\n    return 0\n")
    assert "1 failed" in sandbox.run(tests, overlay, timeout=60).stdout
    overlay.revert("pkg/calc.py")
    assert "unsaved" in overlay.read_text("pkg/calc.py")
    assert "1 passed" in sandbox.run(tests, overlay, timeout=60).stdout
    assert snapshot(project) == before
