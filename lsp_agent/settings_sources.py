"""Where settings come from: flags, editor settings, the environment, the workspace's files, the user's file.

Precedence, highest first (one table: docs/configuration.md shows the same, generated from PRECEDENCE):

| source | where | note |
|---|---|---|
| command line | `lsp-agent ask/index/search/acp` flags | |
| editor settings | the `lspAgent` section of the editor's settings | |
| environment | `LSP_AGENT_*` variables | |
| workspace .env | `<workspace>/.env` | guarded settings only in a trusted workspace |
| workspace file | `<workspace>/.lsp-agent/config.toml` | guarded settings only in a trusted workspace |
| user file | `$XDG_CONFIG_HOME/lsp-agent/config.toml` | also `trustedWorkspaces` |
| default | the declaration in `lsp_agent/config.py` | |

Local beats global (the workspace's files over the user's, as git's local config over its global one) and the
environment beats files (as `GIT_*` variables beat git's config). Object settings (`permissions`, `mcpServers`)
merge by entry across sources: a higher source replaces an entry of the same name and keeps the others.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.config import CLIENT_KEYS, EDITOR_ONLY_PREFIXES, SPECS, Settings, merge_values
from lsp_agent.config_files import (
    SERVER_VARIABLES,
    FileValues,
    flatten_keys,
    guard_server_variables,
    guard_workspace,
    read_config_file,
    user_config_file,
    workspace_config_file,
    workspace_trusted,
)

# (source, where, note), highest first: the table above, and the one docs/configuration.md is generated with.
PRECEDENCE = (
    ("command line", "`lsp-agent ask/index/search/acp` flags", ""),
    ("editor settings", "the `lspAgent` section of the editor's settings", ""),
    ("environment", "`LSP_AGENT_*` variables", ""),
    ("workspace .env", "`<workspace>/.env`", "guarded settings only in a trusted workspace"),
    (
        "workspace file",
        "`<workspace>/.lsp-agent/config.toml`",
        "guarded settings only in a trusted workspace",
    ),
    ("user file", "`$XDG_CONFIG_HOME/lsp-agent/config.toml`", "also `trustedWorkspaces`"),
    ("default", "the declaration in `lsp_agent/config.py`", ""),
)
MERGED_BY_ENTRY = tuple(
    name for name, value in dataclasses.asdict(Settings()).items() if isinstance(value, dict)
)


@dataclass
class LoadedSettings:
    """Settings with where each value came from (`lsp-agent config` shows it), the problems, the files read."""

    settings: Settings
    origins: dict[str, str] = field(default_factory=dict)  # field -> origin; absent: the default
    entry_origins: dict[str, dict[str, str]] = field(default_factory=dict)  # merged objects: entry -> origin
    errors: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # config files that exist
    trusted: bool = False  # the user file trusts this workspace

    def origin(self, name: str) -> str:
        """Where a field's value came from: `default`, `file:PATH`, `env:VAR`, `editor`, `command line`..."""
        return self.origins.get(name, "default")


def client_values(client: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Map editor settings (camelCase, optionally under `lspAgent`) to field names; unknown keys are errors."""
    if isinstance(client.get("lspAgent"), Mapping):
        client = client["lspAgent"]
    values: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in flatten_keys(client).items():
        name = CLIENT_KEYS.get(key)
        if name is None and key.startswith(EDITOR_ONLY_PREFIXES):
            continue
        if name is None:
            errors.append(f"unknown setting lspAgent.{key}")
        elif value is not None:
            values[name] = value
    return values, errors


def env_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings found in an environment mapping (os.environ or a parsed .env)."""
    return {name: environ[spec.env] for name, spec in SPECS.items() if spec.env and environ.get(spec.env)}


def read_dotenv(root: Path | None) -> dict[str, str]:
    """The key/value pairs of `<root>/.env`, or {} when there is none."""
    if root is None:
        return {}
    path = Path(root) / ".env"
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def export_provider_keys(root: Path | None) -> list[str]:
    """Put provider variables from the workspace .env (OPENAI_API_KEY, ...) into os.environ where unset; those
    naming a server (OPENAI_API_BASE, ...) only in a trusted workspace. Returns the refusals."""
    if root is None:
        return []
    found = {k: v for k, v in read_dotenv(root).items() if k.endswith(("_API_KEY", *SERVER_VARIABLES))}
    trusted = workspace_trusted(root, read_config_file(user_config_file(), user=True).trusted)
    kept, refused = guard_server_variables(found, str(Path(root) / ".env"), root, trusted)
    for key, value in kept.items():
        os.environ.setdefault(key, value)
    return refused


def load_settings(
    root: Path | None,
    *,
    flags: Mapping[str, Any] | None = None,
    client: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: bool = True,
) -> tuple[Settings, list[str]]:
    """Settings from all sources (see the table above); returns (settings, errors).

    Each error names the bad setting and where it was set; its value falls back to the next source. `environ`
    stands for os.environ and `user_file=False` leaves the user's config file out (a replay takes neither).
    """
    loaded = load_sources(root, flags=flags, client=client, environ=environ, user_file=user_file)
    return loaded.settings, loaded.errors


def load_sources(
    root: Path | None,
    *,
    flags: Mapping[str, Any] | None = None,
    client: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: bool = True,
) -> LoadedSettings:
    """load_settings() with the origin of every value, the config files found and whether the workspace is trusted."""
    user = read_config_file(user_config_file(), user=True) if user_file else FileValues(user_config_file())
    loaded = LoadedSettings(
        Settings(), errors=list(user.errors), trusted=workspace_trusted(root, user.trusted)
    )
    layers = [(f"file:{user.path}", user.values, {})]
    loaded.files = [user.path] if user_file and user.path.is_file() else []
    if root is not None:
        ws = read_config_file(workspace_config_file(root), user=False)
        values, refused = guard_workspace(ws.values, ws.keys, str(ws.path), root, loaded.trusted)
        loaded.errors += ws.errors + refused
        layers.append((f"file:{ws.path}", values, {}))
        loaded.files += [ws.path] if ws.path.is_file() else []
        dotenv = env_values(read_dotenv(root))
        keys = {name: SPECS[name].env or name for name in dotenv}
        values, refused = guard_workspace(dotenv, keys, str(Path(root) / ".env"), root, loaded.trusted)
        loaded.errors += refused
        layers.append((f".env:{Path(root) / '.env'}", values, keys))
    environment = env_values(os.environ if environ is None else environ)
    layers.append(("env", environment, {name: SPECS[name].env or name for name in environment}))
    if client:
        values, client_errors = client_values(client)
        loaded.errors += client_errors
        layers.append(("editor settings", values, {}))
    if flags:
        layers.append(("command line", {k: v for k, v in flags.items() if v is not None}, {}))
    for source, values, keys in layers:
        _apply(loaded, source, values, keys)
    return loaded


def _apply(loaded: LoadedSettings, source: str, values: Mapping[str, Any], keys: Mapping[str, str]) -> None:
    """One layer over the settings so far: each valid value recorded with its origin, objects merged by entry."""
    label = {"env": "environment"}.get(source, source.split(":")[0])
    for name, raw in values.items():
        before = getattr(loaded.settings, name, None)
        settings, errors = merge_values(loaded.settings, {name: raw}, label)
        loaded.errors += errors
        if errors:
            continue
        origin = f"{source}:{keys[name]}" if source == "env" else source
        if source.startswith(".env:"):
            origin = f"{source} ({keys[name]})"
        if name in MERGED_BY_ENTRY and isinstance(before, dict):
            value = getattr(settings, name)
            settings = dataclasses.replace(settings, **{name: {**before, **value}})
            entries = loaded.entry_origins.setdefault(name, {})
            entries.update(dict.fromkeys(value, origin))
            origin = ", ".join(dict.fromkeys(entries.values()))
        loaded.settings, loaded.origins[name] = settings, origin
