"""Optional Docker backend through the Docker SDK: runs a command in a throwaway container over the scratch copy.

Chosen with LSP_AGENT_SANDBOX_BACKEND=docker (image: LSP_AGENT_SANDBOX_IMAGE, default python:3.11-slim) and used
only when an engine answers; otherwise the local sandbox runs and the result says why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.sandbox.limits import ResourceLimits
from lsp_agent.sandbox.output import truncate_middle
from lsp_agent.sandbox.runner import ExecResult

BACKEND_ENV = "LSP_AGENT_SANDBOX_BACKEND"
IMAGE_ENV = "LSP_AGENT_SANDBOX_IMAGE"
DEFAULT_IMAGE = "python:3.11-slim"
CONTAINER_WORKDIR = "/workspace"


def docker_requested() -> bool:
    """True when the user asked for the Docker backend."""
    return os.environ.get(BACKEND_ENV, "").strip().lower() == "docker"


def docker_status() -> tuple[bool, str]:
    """(reachable, one line saying so or why not) for the Docker engine of the environment."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        return False, "docker backend: the `docker` Python package is not installed (pip install docker)"
    try:
        client = docker.from_env(timeout=3)
        version = client.version().get("Version", "?")
        client.close()
    except DockerException as exc:
        reason = str(exc).splitlines()[0][:200]
        return False, f"docker backend: no Docker engine reachable ({reason})"
    return True, f"docker backend: engine {version} reachable"


def _mounts(
    argv: Sequence[str], workspace: Path, stdin: str | None
) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The command and bind mounts: the workspace, and stdin as a read-only file the command reads from."""
    volumes = {str(workspace): {"bind": CONTAINER_WORKDIR, "mode": "rw"}}
    if stdin is None:
        return list(argv), volumes
    (workspace.parent / "stdin.txt").write_text(stdin, encoding="utf-8")
    volumes[str(workspace.parent / "stdin.txt")] = {"bind": "/sandbox-stdin.txt", "mode": "ro"}
    return ["sh", "-c", '"$@" < /sandbox-stdin.txt', "sh", *argv], volumes


def run_in_docker(
    argv: Sequence[str],
    workspace: Path,
    *,
    limits: ResourceLimits,
    env: dict[str, str],
    stdin: str | None = None,
    image: str | None = None,
    cwd_rel: str = ".",
) -> ExecResult:
    """Run argv in a container: the scratch copy bind-mounted at /workspace, no network, memory and pid limits."""
    import docker
    from docker.errors import DockerException

    image = image or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE
    start = time.perf_counter()
    argv, volumes = _mounts(argv, workspace, stdin)
    client = docker.from_env(timeout=10)
    container = None
    try:
        container = client.containers.run(
            image,
            list(argv),
            detach=True,
            network_mode="none",
            mem_limit=f"{limits.memory_mib}m",
            pids_limit=limits.processes,
            working_dir=CONTAINER_WORKDIR if cwd_rel in ("", ".") else f"{CONTAINER_WORKDIR}/{cwd_rel}",
            volumes=volumes,
            environment={k: v for k, v in env.items() if k not in ("HOME", "TMPDIR", "PATH")},
        )
        timed_out = False
        try:
            status = container.wait(timeout=limits.wall_seconds)
            code = int(status.get("StatusCode", -1))
        except Exception:  # noqa: BLE001 - the SDK raises requests' timeout types
            timed_out = True
            container.kill()
            code = None
        out = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        err = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
    except DockerException as exc:
        return ExecResult(list(argv), None, "", "", time.perf_counter() - start, error=f"docker: {exc}")
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except DockerException:
                pass
        client.close()
    return ExecResult(
        list(argv),
        code,
        truncate_middle(out, 256_000),
        truncate_middle(err, 256_000),
        time.perf_counter() - start,
        timed_out=timed_out,
        container=True,
    )
