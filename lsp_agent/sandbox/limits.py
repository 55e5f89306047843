"""Resource limits applied to every sandboxed process with setrlimit in the child before exec."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class ResourceLimits:
    """Per-process caps: wall clock (enforced by the runner), CPU seconds, address space, file size, processes."""

    wall_seconds: float = 60.0
    cpu_seconds: int = 60
    memory_mib: int = 4096
    file_size_mib: int = 256
    processes: int = 256

    def describe(self) -> str:
        """One line naming every limit (and saying when the process cap cannot apply)."""
        procs = f"{self.processes} processes"
        if os.geteuid() == 0:
            procs += " (not enforced: running as root)"
        return (
            f"limits: {self.wall_seconds:g} s wall clock, {self.cpu_seconds} s CPU, {self.memory_mib} MiB memory, "
            f"{self.file_size_mib} MiB per file, {procs}"
        )

    def preexec(self) -> Callable[[], None]:
        """A preexec_fn that applies the limits (runs in the forked child; must not allocate much)."""
        pairs = [
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_AS, self.memory_mib * MIB),
            (resource.RLIMIT_FSIZE, self.file_size_mib * MIB),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_CORE, 0),
        ]

        def apply() -> None:
            for which, value in pairs:
                soft, hard = resource.getrlimit(which)
                if hard != resource.RLIM_INFINITY:
                    value = min(value, hard)
                try:
                    resource.setrlimit(which, (value, value))
                except (ValueError, OSError):
                    pass

        return apply


def limits_for(timeout: float, *, memory_mib: int = 4096) -> ResourceLimits:
    """Limits for one run of `timeout` wall-clock seconds (CPU capped at the same number of seconds)."""
    timeout = max(0.1, float(timeout))
    return ResourceLimits(
        wall_seconds=timeout, cpu_seconds=max(1, int(timeout + 0.999)), memory_mib=memory_mib
    )
