"""run_python, run_command and run_tests: code execution in the run's sandbox (permission "exec")."""

from __future__ import annotations

from typing import Any

from lsp_agent.sandbox.per_run import close_sandbox, sandbox_for
from lsp_agent.tools.exec_output import EXEC_OUTPUT, OutputTail
from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

__all__ = ["add_exec_tools", "close_sandbox", "exec_tools", "register_exec_tools", "sandbox_for"]

DEFAULT_TIMEOUT = 60.0
MAX_OUTPUT_CHARS = 12_000

_WHERE = (
    " Runs in a private view of the workspace (at its usual path) with this run's proposed edits applied; files "
    "it creates, changes or deletes there join the proposal. The result gives the exit status, stdout and "
    "stderr (long output is cut in the middle) and the isolation in force."
)
_TIMEOUT = {
    "type": "number",
    "description": "Wall-clock limit in seconds (default and maximum: the exec timeout setting, 60 s).",
}


# ctx.extras key: the sandbox's description as the run's exec results last gave it
DESCRIBED = "sandbox_described"


def exec_timeout(ctx: ToolContext, requested: float | None) -> float:
    """The wall-clock limit: the requested seconds, capped by the exec_timeout setting."""
    limit = float(getattr(ctx.settings, "exec_timeout", None) or DEFAULT_TIMEOUT)
    if requested is None:
        return limit
    if requested <= 0:
        raise ToolError(f"timeout must be a positive number of seconds (at most {limit:g})")
    return min(float(requested), limit)


def _run(
    ctx: ToolContext, argv: list[str], timeout: float | None, stdin: str | None = None, cwd: str = "."
) -> str:
    """Run argv in the sandbox and format the observation."""
    if ctx.cancelled():
        raise ToolError("the run was cancelled")
    seconds = exec_timeout(ctx, timeout)
    cwd_rel = ctx.overlay.normalize(cwd)
    if not ctx.overlay.is_dir(cwd_rel):
        raise ToolError(f"cwd {cwd!r} is not a directory in the workspace")
    from lsp_agent.sandbox.isolation import SandboxUnavailable

    listener = ctx.extras.get(EXEC_OUTPUT)
    tail = OutputTail(listener, ctx.redact) if listener is not None else None
    try:
        result = sandbox_for(ctx).run(
            argv,
            ctx.overlay,
            timeout=seconds,
            stdin=stdin,
            cwd_rel=cwd_rel,
            cancel=ctx.cancel,
            on_output=tail.add if tail is not None else None,
        )
    except SandboxUnavailable as exc:
        raise ToolError(str(exc)) from None
    finally:
        if tail is not None:
            tail.flush()
    if result.isolation == ctx.extras.get(DESCRIBED):
        result.isolation = []  # said in the run's first exec result (about 1,000 characters each time)
    elif result.isolation:
        ctx.extras[DESCRIBED] = list(result.isolation)
    return result.format(seconds, MAX_OUTPUT_CHARS)


def run_python(ctx: ToolContext, code: str, timeout: float | None = None) -> str:
    """Run a Python snippet (fed on stdin to a fresh interpreter) in the sandbox."""
    if not code.strip():
        raise ToolError("code is empty: pass the Python source to run")
    return _run(ctx, [sandbox_for(ctx).python().executable, "-"], timeout, stdin=code)


def run_command(ctx: ToolContext, argv: list[str], timeout: float | None = None, cwd: str = ".") -> str:
    """Run a program with arguments (no shell) in the sandbox."""
    if not argv or not all(isinstance(a, str) for a in argv) or not argv[0].strip():
        raise ToolError(
            'argv must be a non-empty list of strings, e.g. ["make", "test"] or ["sh", "-c", "ls | wc"]'
        )
    if any("\0" in a for a in argv):
        raise ToolError("argv must not contain NUL bytes (the kernel cannot pass them to a program)")
    return _run(ctx, list(argv), timeout, cwd=cwd)


def run_tests(ctx: ToolContext, args: list[str] | None = None, timeout: float | None = None) -> str:
    """Run pytest (quiet, no colour) in the sandbox with extra arguments."""
    extra = [str(a) for a in args or []]
    python = sandbox_for(ctx).python()
    out = _run(
        ctx,
        [python.executable, "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", *extra],
        timeout,
    )
    if python.source != "server" and "No module named pytest" in out:
        out += (
            f"\nHint: {python.executable} has no pytest; install pytest into it, or run the tests another way "
            "with run_command"
        )
    return out


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def exec_tools() -> list[Tool]:
    """The three execution tools."""
    return [
        Tool(
            "run_python",
            "Run a Python snippet in a fresh interpreter (print what you want to see)." + _WHERE,
            _schema(
                {"code": {"type": "string", "description": "Python source to run."}, "timeout": _TIMEOUT},
                ["code"],
            ),
            run_python,
            permission="exec",
        ),
        Tool(
            "run_command",
            'Run a program with arguments, without a shell (use ["sh", "-c", "..."] for pipes).' + _WHERE,
            _schema(
                {
                    "argv": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": 'Program and arguments, e.g. ["python", "-m", "mypkg", "--help"].',
                    },
                    "cwd": {
                        "type": "string",
                        "description": "Directory relative to the workspace root (default '.').",
                    },
                    "timeout": _TIMEOUT,
                },
                ["argv"],
            ),
            run_command,
            permission="exec",
        ),
        Tool(
            "run_tests",
            'Run the test suite with pytest (-q) or the tests named in args, e.g. ["tests/test_x.py::test_y", '
            '"-x"].' + _WHERE,
            _schema(
                {
                    "args": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Extra pytest arguments: test paths, node ids, -k EXPR, -x.",
                    },
                    "timeout": _TIMEOUT,
                },
                [],
            ),
            run_tests,
            permission="exec",
        ),
    ]


def register_exec_tools(registry: ToolRegistry) -> ToolRegistry:
    """Add run_python, run_command and run_tests to a registry (replacing earlier copies)."""
    for tool in exec_tools():
        registry.register(tool, replace=True)
    return registry


def add_exec_tools(registry: ToolRegistry, settings: Any = None, *_context: Any) -> None:
    """Registry extension for the CLI and the server: the exec tools in the react style (codeact runs its own)."""
    if getattr(settings, "style", "react") == "react":
        register_exec_tools(registry)
