"""The VS Code client: build, lint, unit tests, the end-to-end Node test against the real server, and the .vsix."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "editor-clients" / "vscode"
NODE, NPM = shutil.which("node"), shutil.which("npm")

EIGHT = (
    "Ask",
    "Ask About Selection",
    "Plan and Ask",
    "Cancel Run",
    "Apply Pending Edits",
    "Reject Pending Edits",
    "Reindex Workspace",
    "Show Transcript",
)

needs_node = pytest.mark.skipif(
    NODE is None or NPM is None, reason="node and npm are needed to build and test the VS Code extension"
)


def _run(
    args: list[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command in the extension folder; fail the test with its output when it fails."""
    proc = subprocess.run(
        args, cwd=EXTENSION, capture_output=True, text=True, timeout=timeout, env=env or os.environ.copy()
    )
    if proc.returncode != 0:
        # node --test reports a failed subtest as "not ok N - name" and its error below it: keep those in view
        lines = proc.stdout.splitlines()
        failed = [i for i, line in enumerate(lines) if line.lstrip().startswith("not ok")]
        blocks = "\n".join("\n".join(lines[i : i + 25]) for i in failed)[:6000]
        pytest.fail(
            f"{' '.join(args)} exited with {proc.returncode}\n{blocks}\n...\n{proc.stdout[-3000:]}\n"
            f"{proc.stderr[-3000:]}"
        )
    return proc


def _script(name: str, timeout: float, *extra: str, env: dict[str, str] | None = None) -> None:
    """Run package.json's script `name` as `npm run` would (node_modules/.bin first on PATH), without npm's own start."""
    scripts = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))["scripts"]
    env = dict(env or os.environ)
    env["PATH"] = f"{EXTENSION / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    _run(["sh", "-c", scripts[name] + "".join(f" {shlex.quote(a)}" for a in extra)], timeout=timeout, env=env)


def _lock_digest() -> str:
    """A digest of package.json and package-lock.json: node_modules is current when it was installed from these."""
    data = b"".join((EXTENSION / name).read_bytes() for name in ("package.json", "package-lock.json"))
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def built() -> Path:
    """node_modules installed from package-lock.json (npm ci when missing or stale) and the TypeScript compiled."""
    stamp = EXTENSION / "node_modules" / ".lsp-agent-lock.sha256"
    digest = _lock_digest()
    if not stamp.exists() or stamp.read_text(encoding="utf-8").strip() != digest:
        # --prefer-offline: what npm's cache holds is used without asking the registry again (~20% less CPU)
        _run([NPM, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--progress=false"], timeout=900)
        stamp.write_text(digest + "\n", encoding="utf-8")
    shutil.rmtree(EXTENSION / "out", ignore_errors=True)  # no stale compiled tests from deleted sources
    _script("build", timeout=300)
    return EXTENSION / "out"


@needs_node
@pytest.mark.timeout(900)
@pytest.mark.slow
def test_typescript_lints_clean(built: Path) -> None:
    _script("lint", timeout=300)


@needs_node
@pytest.mark.timeout(900)
@pytest.mark.slow
def test_node_unit_and_end_to_end_tests_pass(built: Path) -> None:
    env = os.environ.copy()
    env["LSP_AGENT_TEST_PYTHON"] = sys.executable  # the Python that runs the server under test
    # The test files only (node --test given the folder also runs out/test/support/*.js, one process each).
    files = sorted(str(f.relative_to(EXTENSION)) for f in (built / "test").glob("*.test.js"))
    assert len(files) >= 15, files
    proc = _run([NODE, "--test", *files], timeout=300, env=env)
    counts = dict(re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", proc.stdout, re.M))
    assert counts.get("fail") == "0" and counts.get("cancelled") == "0", proc.stdout[-4000:]
    assert counts.get("skipped") == "0", "no Node test may skip"
    assert int(counts.get("pass", "0")) >= 30, proc.stdout[-4000:]
    for name in (
        "Apply Pending Edits sends the proposal",
        "Cancel on a run's progress notification cancels the run",
        "Plan and Ask sends plan",
        "Reindex Workspace rebuilds",
    ):
        assert re.search(rf"^ok \d+ - {name}", proc.stdout, re.M), proc.stdout[-4000:]
    assert re.search(r"^ok \d+ - changed lspAgent settings reach the running server", proc.stdout, re.M)


@needs_node
@pytest.mark.timeout(900)
@pytest.mark.slow
def test_extension_packages_as_vsix(built: Path, tmp_path: Path) -> None:
    vsix = tmp_path / "lsp-agent.vsix"
    _script("package", 300, "-o", str(vsix))  # vsce runs vscode:prepublish (the esbuild bundle) first
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    # One bundled file (esbuild): no node_modules, no compiled tree, no sources, no tests.
    assert manifest["main"] == "./dist/extension.js" and "extension/dist/extension.js" in names
    assert not any(
        n.startswith(("extension/node_modules/", "extension/out/", "extension/src/")) for n in names
    )
    assert [n for n in names if n.endswith(".js")] == ["extension/dist/extension.js"]
    # The bundle loads on its own (no node_modules beside it): only `vscode` comes from the editor.
    bundle = tmp_path / "alone" / "extension.js"
    bundle.parent.mkdir()
    bundle.write_bytes(archive_bytes(vsix, "extension/dist/extension.js"))
    probe = (
        "const M = require('module'); const load = M._load;"
        "const stub = new Proxy({}, { get: (t, k) => (t[k] ??= class {}) });"
        "M._load = (r, ...a) => (r === 'vscode' ? stub : load(r, ...a));"
        f"const ext = require({json.dumps(str(bundle))});"
        "console.log(typeof ext.activate, typeof ext.deactivate);"
    )
    loaded = subprocess.run([NODE, "-e", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert loaded.stdout.strip() == "function function", loaded.stderr[-2000:]
    titles = {c["command"]: c["title"] for c in manifest["contributes"]["commands"]}
    assert set(EIGHT) <= set(titles.values())
    # All eight are in the editor's context menu (an "LSP Agent" submenu) and none is hidden from the palette.
    menus = manifest["contributes"]["menus"]
    submenus = [m["submenu"] for m in menus["editor/context"] if "submenu" in m]
    in_context = {titles[m["command"]] for s in submenus for m in menus[s]}
    in_context |= {titles[m["command"]] for m in menus["editor/context"] if "command" in m}
    assert set(EIGHT) <= in_context
    hidden = {titles[m["command"]] for m in menus.get("commandPalette", []) if m.get("when") == "false"}
    assert not hidden & set(EIGHT)
    settings = set(manifest["contributes"]["configuration"]["properties"])
    for key in (
        "model",
        "apiBase",
        "toolCalling",
        "maxIterations",
        "plan",
        "style",
        "python",
        "index.exclude",
        "index.maxFileSize",
        "permissions",
        "mcpServers",
    ):
        assert f"lspAgent.{key}" in settings


def archive_bytes(path: Path, name: str) -> bytes:
    """One member of a zip archive."""
    with zipfile.ZipFile(path) as archive:
        return archive.read(name)


def test_every_contributed_setting_is_one_the_server_reads() -> None:
    from lsp_agent.config import CLIENT_KEYS, EDITOR_ONLY_PREFIXES

    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    keys = [k.removeprefix("lspAgent.") for k in manifest["contributes"]["configuration"]["properties"]]
    server_keys = [k for k in keys if not k.startswith(EDITOR_ONLY_PREFIXES)]
    assert len(server_keys) >= 10
    assert [k for k in server_keys if k not in CLIENT_KEYS] == []
