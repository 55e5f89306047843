"""The tool registry: named tools with JSON-schema parameters, validated and timed execution."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.tools.aliases import alias_note, canonical_arguments, canonical_tool
from lsp_agent.tools.validation import describe_parameters, validate_arguments
from lsp_agent.workspace.overlay import FileTooLargeError, NotTextError, Overlay
from lsp_agent.workspace.paths import PathError
from lsp_agent.workspace.redaction import Redactor, redactor_for
from lsp_agent.workspace.secrets import SecretFiles, secret_files_of

if TYPE_CHECKING:
    from lsp_agent.config import Settings
    from lsp_agent.index import WorkspaceIndex

log = logging.getLogger(__name__)

PERMISSIONS = ("none", "exec", "external")
DEFAULT_MAX_FILE_SIZE = 1_000_000


@dataclass
class ToolLimits:
    """Output limits of the built-in tools (the truncation markers name these numbers)."""

    read_max_lines: int = 400
    read_max_line_chars: int = 2000
    list_max_items: int = 300
    search_max_results: int = 100
    snippet_chars: int = 100
    search_code_max_lines: int = 40
    find_symbol_max: int = 50
    max_file_size: int | None = None  # None: settings.max_file_size, else 1 MB


@dataclass
class ToolContext:
    """Everything a tool may use: the root, the run's overlay, the index, settings and the cancel flag."""

    root: Path
    overlay: Overlay
    index: WorkspaceIndex | None = None
    settings: Settings | None = None
    cancel: threading.Event | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    limits: ToolLimits = field(default_factory=ToolLimits)
    router: Any = None  # tools/read_folders.FolderRouter: calls that read other workspace folders go there

    @property
    def max_file_size(self) -> int:
        """Files above this many bytes are refused by the reading tools."""
        if self.limits.max_file_size is not None:
            return self.limits.max_file_size
        if self.settings is not None and getattr(self.settings, "max_file_size", None):
            return int(self.settings.max_file_size)
        return DEFAULT_MAX_FILE_SIZE

    @property
    def exclude(self) -> list[str]:
        """Extra gitignore-style patterns from the settings."""
        return list(getattr(self.settings, "index_exclude", None) or [])

    cleanups: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _redactor: Redactor | None = field(default=None, init=False, repr=False)

    @property
    def secret_files(self) -> SecretFiles:
        """The secret-file patterns: the defaults plus the secretFiles setting."""
        return secret_files_of(self.settings)

    def redact(self, text: str) -> str:
        """`text` with every known secret value replaced by [REDACTED:NAME] (built on first use, then kept)."""
        if self._redactor is None:
            self._redactor = redactor_for(self.settings, self.root)
        return self._redactor.redact(text)

    def cancelled(self) -> bool:
        """True once the run was asked to stop."""
        return self.cancel is not None and self.cancel.is_set()

    def on_close(self, cleanup: Callable[[], None]) -> None:
        """Have `cleanup` called when the run ends (e.g. a sandbox removing its scratch copy)."""
        self.cleanups.append(cleanup)

    def close(self) -> None:
        """Call the cleanups registered with on_close, newest first, each once; failures are logged."""
        pending, self.cleanups = self.cleanups, []
        for cleanup in reversed(pending):
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - one failing cleanup must not keep the others from running
                log.exception("tool cleanup %r failed", cleanup)


@dataclass
class Tool:
    """A tool the model can call: name, description, JSON schema of its arguments and the function to run."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., str | Awaitable[str]]
    permission: str = "none"

    def __post_init__(self) -> None:
        if self.permission not in PERMISSIONS:
            raise ValueError(
                f"tool {self.name}: permission must be one of {PERMISSIONS}, got {self.permission!r}"
            )
        if self.parameters.get("type", "object") != "object":
            raise ValueError(f"tool {self.name}: parameters must be a JSON schema of type 'object'")

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling form of this tool."""
        params = {"type": "object", "properties": {}, **self.parameters}
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }


class ToolError(Exception):
    """A failure the model should read as the observation (its message says what went wrong and what to do)."""


@dataclass
class ToolResult:
    """The observation of one tool call: ok, the text shown to the model, and how long it took."""

    ok: bool
    output: str
    seconds: float


# Exceptions whose message is already written for the model.
_READABLE_ERRORS = (
    ToolError,
    PathError,
    NotTextError,
    FileTooLargeError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
)


class ToolRegistry:
    """Named tools; execute() validates arguments and never raises for bad model input."""

    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool; a second tool with the same name is an error unless replace=True."""
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Remove a tool if present."""
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names in registration order."""
        return list(self._tools)

    def tools(self) -> list[Tool]:
        """Registered tools in registration order."""
        return list(self._tools.values())

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style {"type": "function", "function": {...}} schemas of every tool."""
        return [t.schema() for t in self._tools.values()]

    def resolve_name(self, name: str) -> Tool | None:
        """The tool for a possibly decorated name ('functions.read_file', 'Read_File') or another agent's name for
        it ('replace', 'execute_code')."""
        if not isinstance(name, str):
            return None
        tool = self._tools.get(name)
        if tool is None:
            plain = name.strip().rsplit(".", 1)[-1].strip().lower().replace("-", "_")
            tool = self._tools.get(plain)
        if tool is None and (ours := canonical_tool(name)) is not None:
            tool = self._tools.get(ours)  # another agent's name for one of ours (tools/aliases.py)
        return tool

    async def execute(self, name: str, arguments: dict[str, Any] | str, ctx: ToolContext) -> ToolResult:
        """Validate and run one call; any failure becomes ok=False with a message the model can act on.

        Every result, failures included, has the run's secret values redacted: this is the one place all tool
        observations (built-in, sandbox, MCP) pass before the model, the events and the transcript see them.
        """
        tool = self.resolve_name(name)
        renamed: dict[str, str] = {}
        if tool is not None:
            arguments, renamed = canonical_arguments(tool.parameters, arguments)  # type: ignore[assignment]
        result = await self._execute(name, arguments, ctx)
        called = (
            name if tool is not None and canonical_tool(name) == tool.name else getattr(tool, "name", name)
        )
        if tool is not None and (note := alias_note(called, tool.name, renamed, tool.parameters)):
            result.output = note + result.output  # the model learns our names
        result.output = ctx.redact(result.output)
        return result

    async def _execute(self, name: str, arguments: dict[str, Any] | str, ctx: ToolContext) -> ToolResult:
        """Validate and run one call (see execute)."""
        start = time.perf_counter()
        tool = self.resolve_name(name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return ToolResult(
                False, f"Error: unknown tool {name!r}. Available tools: {available}", _since(start)
            )
        args, errors = validate_arguments(tool.parameters, arguments)
        if errors:
            message = f"Error: invalid arguments for {tool.name}: {'; '.join(errors)}."
            message += f"\nParameters of {tool.name}: {describe_parameters(tool.parameters)}"
            return ToolResult(False, message, _since(start))
        try:
            if ctx.router is not None:
                output = await ctx.router.call(tool, ctx, args, _call)
            else:
                output = await _call(tool, ctx, args)
        except _READABLE_ERRORS as exc:
            return ToolResult(False, f"Error: {_message(exc)}", _since(start))
        except OSError as exc:
            return ToolResult(False, f"Error: {tool.name} failed: {exc.strerror or exc}", _since(start))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s raised", tool.name)
            return ToolResult(False, f"Error: {tool.name} failed: {type(exc).__name__}: {exc}", _since(start))
        return ToolResult(True, _as_text(output), _since(start))


async def _call(tool: Tool, ctx: ToolContext, args: dict[str, Any]) -> Any:
    """Run a tool function: coroutines on the loop, plain functions in a worker thread."""
    if inspect.iscoroutinefunction(tool.function):
        return await tool.function(ctx, **args)
    result = await asyncio.to_thread(tool.function, ctx, **args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _message(exc: BaseException) -> str:
    """The readable message of an exception (OSError's args tuple is flattened)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc) or type(exc).__name__


def _as_text(output: Any) -> str:
    """Tool output as the text the model sees."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(output)


def _since(start: float) -> float:
    """Seconds since `start`."""
    return time.perf_counter() - start


def default_registry() -> ToolRegistry:
    """The built-in tools: files, search, index and task_complete."""
    from lsp_agent.tools.builtin import builtin_tools

    return ToolRegistry(builtin_tools())
