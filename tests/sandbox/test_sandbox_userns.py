"""The namespace sandbox as an unprivileged user (a user namespace maps the user to root inside): run here as
`nobody` with the system Python, since the launcher needs nothing outside the standard library."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")
NOBODY = 65534

SCRIPT = """
import json, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from lsp_agent.sandbox.namespace import overlay_options, plan_namespace
base = Path(sys.argv[1])
dirs = {n: base / n for n in ("ws", "upper", "work", "staging", "tmp", "home", "root")}
for d in dirs.values():
    d.mkdir()
(dirs["ws"] / "a.txt").write_text("real\\n")
view = {"kind": "overlay", "options": overlay_options([dirs["staging"], dirs["ws"]], dirs["upper"], dirs["work"])}
plan = plan_namespace(dirs["ws"], view=view, scratch_tmp=dirs["tmp"], scratch_home=dirs["home"],
                      newroot=dirs["root"], cwd=dirs["ws"], home=None)
script = (
    f"echo view > {dirs['ws']}/a.txt; touch /etc/lsp-agent-userns 2>&1; mount -o remount,rw / 2>&1; "
    "id -u; grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'"
)
done = subprocess.run(plan.argv(["sh", "-c", script]), capture_output=True, text=True, timeout=60)
upper = dirs["upper"] / "a.txt"
print(json.dumps({"rc": done.returncode, "out": done.stdout + done.stderr,
                  "upper": upper.read_text() if upper.exists() else None, "real": (dirs["ws"] / "a.txt").read_text()}))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not SYSTEM_PYTHON.exists() or not shutil.which("setpriv"),
                    reason="needs root (to become nobody), setpriv and /usr/bin/python3")  # fmt: skip
def test_namespace_sandbox_as_an_unprivileged_user() -> None:
    base = Path(tempfile.mkdtemp(prefix="lsp-agent-userns-", dir="/tmp"))
    try:
        os.chown(base, NOBODY, NOBODY)
        base.chmod(0o755)
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", str(SYSTEM_PYTHON), "-I", "-c", SCRIPT, str(base), str(REPO)]  # fmt: skip
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env={"PATH": os.environ["PATH"]}
        )
        if done.returncode != 0 or not done.stdout.strip():
            pytest.fail(f"could not run as nobody: {done.stderr}")
        seen = json.loads(done.stdout)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if "setup failed: unshare" in seen["out"]:
        pytest.skip("unprivileged user namespaces are disabled here")
    assert seen["rc"] == 0, seen["out"]
    assert seen["upper"] == "view\n" and seen["real"] == "real\n"  # the write went to the view, not the file
    assert "Read-only file system" in seen["out"]  # /etc
    assert "permission denied" in seen["out"].lower()  # the remount
    assert "CapEff:\t0000000000000000" in seen["out"]
    assert seen["out"].split()[-1] in ("1", "2", "3")  # own PID namespace: only the sandbox's processes
    assert not Path("/etc/lsp-agent-userns").exists()
