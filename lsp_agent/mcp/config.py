"""MCP server definitions from editor settings, config files and `--mcp-server` flags."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lsp_agent.mcp.expand import ExpansionError, expand

DEFAULT_STARTUP_TIMEOUT = 10.0
DEFAULT_CALL_TIMEOUT = 60.0
WORKSPACE_CONFIG = Path(".lsp-agent") / "mcp.json"
TRANSPORTS = ("stdio", "http", "sse")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: a stdio command or a streamable HTTP (or legacy SSE) URL, with its timeouts."""

    name: str
    transport: str  # "stdio" | "http" | "sse"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    source: str = field(default="settings", compare=False)
    shown: str = field(default="", compare=False)  # command line or URL as written (before ${VAR} expansion)

    def describe(self) -> str:
        """What the server runs or where it is, for messages (as configured: expanded secrets stay out)."""
        if self.shown:
            return self.shown
        if self.transport == "stdio":
            return shlex.join([self.command or "", *self.args])
        return self.url or ""


def safe_name(name: str) -> str:
    """A server name usable in tool names (letters, digits, _ and -)."""
    cleaned = _NAME_BAD.sub("_", name).strip("_-")
    return cleaned or "mcp"


def parse_server(
    name: str,
    spec: Any,
    source: str = "settings",
    *,
    root: Path | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> McpServerConfig:
    """One {command, args, env, cwd} or {url, headers, type} entry; ValueError says what is wrong.

    The entry's `startupTimeout` wins over `startup_timeout` (the `mcpStartupTimeout` setting).

    `${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${workspaceFolder}` (`root`) and `${userHome}` are filled in
    in command, args, env, cwd, url and headers; an unset variable is an error naming it.
    """
    try:
        return _parse_server(name, spec, source, root, startup_timeout)
    except ExpansionError as exc:
        raise ValueError(f"MCP server {name!r} ({source}): {exc}") from None


def _parse_server(
    name: str, spec: Any, source: str, root: Path | None, startup_timeout: float
) -> McpServerConfig:
    """parse_server() without the error prefix for expansion errors."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"MCP server {name!r} ({source}): expected an object with 'command' or 'url'")
    kind = str(spec.get("type") or spec.get("transport") or "").lower()
    kind = {"streamable-http": "http", "streamablehttp": "http", "streamable_http": "http"}.get(kind, kind)
    if kind and kind not in TRANSPORTS:
        raise ValueError(f"MCP server {name!r} ({source}): unknown type {kind!r} (use stdio, http or sse)")
    startup = _positive(spec.get("startupTimeout", spec.get("timeout")), startup_timeout, name, source)
    call = _positive(spec.get("toolTimeout", spec.get("callTimeout")), DEFAULT_CALL_TIMEOUT, name, source)
    url, command = spec.get("url"), spec.get("command")
    if isinstance(url, str) and url.strip() and kind != "stdio":
        shown = url.strip()
        url = expand(shown, "url", root=root)
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"MCP server {name!r} ({source}): 'url' must start with http:// or https://")
        headers = _string_map(spec.get("headers"), "headers", name, source)
        return McpServerConfig(
            name=name,
            transport=kind or "http",
            url=url,
            headers=tuple((k, expand(v, f"headers.{k}", root=root)) for k, v in headers),
            startup_timeout=startup,
            call_timeout=call,
            source=source,
            shown=shown,
        )
    if isinstance(command, str) and command.strip():
        args = spec.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"MCP server {name!r} ({source}): 'args' must be a list of strings")
        cwd = spec.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError(f"MCP server {name!r} ({source}): 'cwd' must be a string")
        env = _string_map(spec.get("env"), "env", name, source)
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=expand(command.strip(), "command", root=root),
            args=tuple(expand(a, f"args[{i}]", root=root) for i, a in enumerate(args)),
            env=tuple((k, expand(v, f"env.{k}", root=root)) for k, v in env),
            cwd=None if cwd is None else expand(cwd, "cwd", root=root),
            startup_timeout=startup,
            call_timeout=call,
            source=source,
            shown=shlex.join([command.strip(), *args]),
        )
    raise ValueError(
        f"MCP server {name!r} ({source}): needs a 'command' (stdio server) or a 'url' (streamable HTTP server)"
    )


def parse_servers(
    value: Any,
    source: str = "settings",
    *,
    root: Path | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> tuple[list[McpServerConfig], list[str]]:
    """All entries of an `mcpServers` object; bad entries are reported and skipped."""
    if value is None:
        return [], []
    if not isinstance(value, Mapping):
        return [], [f"{source}: 'mcpServers' must be an object of name -> {{command|url}}"]
    servers: list[McpServerConfig] = []
    errors: list[str] = []
    for name, spec in value.items():
        if isinstance(spec, Mapping) and spec.get("disabled") is True:
            continue
        try:
            servers.append(parse_server(str(name), spec, source, root=root, startup_timeout=startup_timeout))
        except ValueError as exc:
            errors.append(str(exc))
    return servers, errors


def server_from_flag(
    value: str, taken: Sequence[str] = (), startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
) -> McpServerConfig:
    """`--mcp-server URL_OR_COMMAND`: a URL is a streamable HTTP server, anything else a shell-split command
    (started within `startup_timeout`, the `mcpStartupTimeout` setting)."""
    text = value.strip()
    if not text:
        raise ValueError("--mcp-server needs a URL or a command")
    if re.match(r"^https?://", text, re.IGNORECASE):
        parts = urlsplit(text)
        base = parts.hostname or "mcp"
        base = base.split(".")[0] if not base.replace(".", "").isdigit() else "http"
        if parts.port:
            base = f"{base}_{parts.port}"
        return McpServerConfig(
            name=_unique(safe_name(base), taken),
            transport="http",
            url=text,
            startup_timeout=startup_timeout,
            source="flag",
        )
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"--mcp-server {value!r}: cannot split the command ({exc})") from None
    return McpServerConfig(
        name=_unique(_name_from_command(words), taken),
        transport="stdio",
        command=words[0],
        args=tuple(words[1:]),
        startup_timeout=startup_timeout,
        source="flag",
    )


def config_file_paths(root: Path | None) -> list[Path]:
    """Config files in increasing precedence: the user's, then the workspace's."""
    from platformdirs import user_config_path

    paths = [Path.home() / ".config" / "lsp-agent" / "mcp.json"]
    native = user_config_path("lsp-agent") / "mcp.json"  # XDG_CONFIG_HOME on Linux, the OS's place elsewhere
    if native != paths[0]:
        paths.append(native)
    if root is not None:
        paths.append(Path(root) / WORKSPACE_CONFIG)
    return paths


def read_config_file(
    path: Path, root: Path | None = None, startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
) -> tuple[list[McpServerConfig], list[str]]:
    """Servers under the top-level "mcpServers" (or VS Code's "servers") key of one JSON file."""
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path}: cannot read the MCP config file: {exc}"]
    except json.JSONDecodeError as exc:
        return [], [f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]
    if not isinstance(data, Mapping):
        return [], [f'{path}: expected a JSON object with an "mcpServers" key']
    servers = data.get("mcpServers", data.get("servers"))
    if servers is None:
        return [], [f'{path}: no "mcpServers" key; expected {{"mcpServers": {{"name": {{"command": ...}}}}}}']
    return parse_servers(servers, source=str(path), root=root, startup_timeout=startup_timeout)


def collect_servers(
    root: Path | None,
    settings_servers: Mapping[str, Any] | None = None,
    flags: Sequence[str] = (),
    *,
    read_files: bool = True,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> tuple[list[McpServerConfig], list[str]]:
    """Servers from the config files, the editor settings and flags (later sources replace same-named ones).

    The workspace's `.lsp-agent/mcp.json` starts programs a repository chose: its servers are taken only when
    the user's config.toml trusts the workspace (`trustedWorkspaces`), else one error says how to allow them.
    """
    by_name: dict[str, McpServerConfig] = {}
    errors: list[str] = []
    sources: list[tuple[list[McpServerConfig], list[str]]] = []
    if read_files:
        for path in config_file_paths(root):
            servers, errs = read_config_file(path, root, startup_timeout)
            if servers and root is not None and path == Path(root) / WORKSPACE_CONFIG:
                servers, errs = _trusted_only(servers, errs, path, root)
            sources.append((servers, errs))
    sources.append(
        parse_servers(settings_servers or {}, source="settings", root=root, startup_timeout=startup_timeout)
    )
    for servers, errs in sources:
        errors.extend(errs)
        by_name.update((s.name, s) for s in servers)
    for flag in flags:
        try:
            server = server_from_flag(flag, taken=list(by_name), startup_timeout=startup_timeout)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        by_name[server.name] = server
    return list(by_name.values()), errors


def servers_for(
    settings: Any, root: Path | None, flags: Sequence[str] = (), *, read_files: bool = True
) -> tuple[list[McpServerConfig], list[str]]:
    """collect_servers() with a run's settings: its `mcpServers` and its `mcpStartupTimeout`."""
    return collect_servers(
        root,
        getattr(settings, "mcp_servers", None) or {},
        flags,
        read_files=read_files,
        startup_timeout=getattr(settings, "mcp_startup_timeout", None) or DEFAULT_STARTUP_TIMEOUT,
    )


def _trusted_only(
    servers: list[McpServerConfig], errors: list[str], path: Path, root: Path
) -> tuple[list[McpServerConfig], list[str]]:
    """The workspace file's servers when the user trusts the workspace; else none and a message saying why."""
    from lsp_agent.config_files import TRUST_KEY, user_config_file, user_trusts

    if user_trusts(root):
        return servers, errors
    names = ", ".join(s.name for s in servers)
    return [], [
        *errors,
        f"{path}: MCP servers from a workspace file are not started ({names}): a cloned repository must not "
        f"start programs without your consent; put them in {user_config_file()} or trust this workspace there: "
        f'{TRUST_KEY} = ["{Path(root).resolve()}"] (`lsp-agent config --trust` adds it)',
    ]


def _name_from_command(words: Sequence[str]) -> str:
    """A readable name from a command: the script or package it runs rather than the interpreter."""
    launchers = {
        "python",
        "python3",
        "node",
        "npx",
        "uvx",
        "uv",
        "bunx",
        "deno",
        "pipx",
        "bun",
        "run",
        "-m",
        "-y",
    }
    candidates = [w for w in words if not w.startswith("-") or w == "-m"]
    for word in candidates:
        stem = Path(word).name
        stem = re.sub(r"\.(py|js|mjs|ts|exe)$", "", stem)
        stem = re.sub(r"@[\w.^~-]*$", "", stem)  # npm version suffix
        if stem.lower() not in launchers and not re.match(r"^python\d", stem.lower()) and stem:
            stem = stem.removeprefix("mcp-server-").removeprefix("server-").removesuffix("-mcp-server")
            return safe_name(stem)
    return safe_name(Path(words[0]).name) if words else "mcp"


def _unique(name: str, taken: Sequence[str]) -> str:
    """`name`, or `name_2`, `name_3`... if already used."""
    if name not in taken:
        return name
    n = 2
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def _positive(value: Any, default: float, name: str, source: str) -> float:
    """A positive number of seconds, the default when absent."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"MCP server {name!r} ({source}): timeouts must be positive numbers of seconds")
    return float(value)


def _string_map(value: Any, key: str, name: str, source: str) -> tuple[tuple[str, str], ...]:
    """A {str: str} object as sorted pairs (numbers and booleans are turned into strings)."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ValueError(f"MCP server {name!r} ({source}): {key!r} must be an object of strings")
    out = []
    for k, v in value.items():
        if isinstance(v, (dict, list)) or v is None:
            raise ValueError(f"MCP server {name!r} ({source}): {key}.{k} must be a string")
        out.append((str(k), str(v).lower() if isinstance(v, bool) else str(v)))
    return tuple(sorted(out))
