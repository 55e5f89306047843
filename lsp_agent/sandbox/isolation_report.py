"""The lines a tool result states about the isolation code ran under: each one true of the mechanism in force."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_agent.sandbox.python_env import PythonChoice

if TYPE_CHECKING:
    from lsp_agent.sandbox.limits import ResourceLimits
    from lsp_agent.sandbox.session import Sandbox

SECRETS_LINE = "environment: secrets removed (API keys, tokens, passwords, AWS_*)"


def describe_isolation(sandbox: Sandbox, limits: ResourceLimits, *, container: bool = False) -> list[str]:
    """One fact per line: where the workspace view was, which Python, network, filesystem, home, /tmp, limits.

    `container` is True only when the code really ran in a Docker container.
    """
    if container:
        return [
            f"workspace: scratch copy ({sandbox.scratch.copy_method}) at /workspace in the container with the "
            "proposed edits applied; your real files are untouched",
            PythonChoice("python", "container").describe(),
            "container: Docker (network none, memory and process limits)",
            SECRETS_LINE,
            limits.describe(),
        ]
    isolation = sandbox.isolation
    lines = [_workspace_line(sandbox), sandbox.python().describe(), isolation.network_line()]
    lines.append(isolation.filesystem_line())
    lines += _private_lines(sandbox)
    if sandbox.docker_note:
        if sandbox.use_docker:
            lines.append(
                f"{sandbox.docker_note}, but this code ran in the local sandbox above, not in a container "
                "(CodeAct's persistent interpreter always runs locally)"
            )
        else:
            lines.append(sandbox.docker_note + "; using the local sandbox")
    lines.append(SECRETS_LINE)
    lines.append(limits.describe())
    return lines


def _workspace_line(sandbox: Sandbox) -> str:
    """Where the code saw the workspace and whether the real files are protected."""
    scratch = sandbox.scratch
    mechanism = sandbox.isolation.mechanism
    if mechanism == "namespace":
        kind = (
            "a copy-on-write view (overlayfs)"
            if scratch.mode == "overlay"
            else f"a scratch copy ({scratch.copy_method})"
        )
        return (
            f"workspace: {sandbox.root} shows {kind} of your files with the proposed edits applied; what the code "
            "writes there joins the proposal, your real files are untouched"
        )
    if mechanism == "bwrap":
        return (
            f"workspace: scratch copy ({scratch.copy_method}) with the proposed edits applied, mounted at "
            f"{sandbox.root}; what the code writes there joins the proposal, your real files are untouched"
        )
    return (
        f"workspace: scratch copy ({scratch.copy_method}) at {scratch.workspace} with the proposed edits applied; "
        f"your real files in {sandbox.root} are NOT protected: the code could write to them by their path"
    )


def _private_lines(sandbox: Sandbox) -> list[str]:
    """Home, /tmp and process facts of the namespace sandbox (bwrap's are in its filesystem line)."""
    scratch = sandbox.scratch
    plan = sandbox._plan
    if sandbox.isolation.mechanism == "none":
        return [f"home: HOME points to {scratch.home}, but your real home directory is NOT hidden"]
    if sandbox.isolation.mechanism != "namespace" or plan is None:
        return [f"home: HOME is a private directory ({scratch.home}); TMPDIR is {scratch.tmp}"]
    if plan.hidden_home is not None:
        inside = (
            "the workspace view and, read-only, the Python installation and PATH directories inside it are visible"
            if sandbox.root.is_relative_to(plan.hidden_home)
            else "the Python installation and PATH directories inside it are visible, read-only"
        )
        home = f"home: {plan.hidden_home} is a private empty directory for this run (only {inside})"
    else:
        home = (
            f"home: HOME is {plan.home}, private to this run; your home directory is not hidden (read-only)"
        )
    run = "; /run is empty" if any(m["target"] == "/run" for m in plan.mounts) else ""
    secrets = []
    if plan.hidden_files:
        names = ", ".join(str(p.relative_to(sandbox.root)) for p in plan.hidden_files[:5])
        more = f" and {len(plan.hidden_files) - 5} more" if len(plan.hidden_files) > 5 else ""
        secrets = [f"secret files: {names}{more} read as empty, read-only files"]
    return secrets + [
        home,
        "/tmp: private to this run" if "/tmp" in plan.writable else "/tmp: inside the workspace view",
        "processes: own PID namespace (no other process is visible; all are killed when the run ends); /dev "
        f"holds only null, zero, full, random, urandom and tty{run}",
    ]
