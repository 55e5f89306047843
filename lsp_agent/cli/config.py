"""`lsp-agent config [--check] [--json] [--markdown]`: the effective settings and where each value came from."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from lsp_agent.config import SPECS
from lsp_agent.config_files import user_config_file, workspace_config_file
from lsp_agent.settings_sources import LoadedSettings, load_sources

SECRET_FIELDS = ("api_key",)
SECRET_ENTRY_KEYS = ("env", "headers")  # of an MCP server: values shown masked unless they name a ${VAR}
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`config`."""
    p = commands.add_parser(
        "config",
        help="show the effective settings and where each came from; --check validates the config files",
        description="Print every setting as `key = value` (TOML) with its origin: default, a config file, an "
        "environment variable, the workspace .env or a flag. Editor settings are the editor's own to show.",
    )
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.add_argument("--check", action="store_true", help="validate all sources; exit 1 when any has a problem")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--trust",
        action="store_true",
        help="trust the workspace: add it to trustedWorkspaces in your user file, so its files may set "
        "permissions, mcpServers, allowUnisolatedExec and python",
    )
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print the settings reference page (docs/configuration.md) generated from the declarations",
    )
    p.set_defaults(handler=run_config)


def run_config(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent config`; returns the exit status."""
    if getattr(args, "markdown", False):
        from lsp_agent.cli.config_docs import reference_page

        sys.stdout.write(reference_page())
        return 0
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    if not root.is_dir():
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return 2
    if getattr(args, "trust", False):
        return _trust(root)
    loaded = load_sources(root)
    from lsp_agent.mcp.config import servers_for

    _, mcp_errors = servers_for(loaded.settings, root)  # mcp.json files, ${VAR}s, the workspace's trust
    loaded.errors += [error for error in mcp_errors if error not in loaded.errors]
    if getattr(args, "json", False):
        print(json.dumps(as_json(loaded, root), indent=1, ensure_ascii=False))
    elif getattr(args, "check", False):
        _print_check(loaded, root)
    else:
        _print_settings(loaded, root)
    return 1 if getattr(args, "check", False) and loaded.errors else 0


def _trust(root: Path) -> int:
    """`config --trust`: the workspace added to the user file's trustedWorkspaces."""
    from lsp_agent.config_files import trust_workspace

    try:
        path, changed = trust_workspace(root)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{'trusted' if changed else 'already trusted'}: {root} ({path})")
    return 0


def _print_check(loaded: LoadedSettings, root: Path) -> None:
    """Each problem on a line, or one line saying which files are fine."""
    for error in loaded.errors:
        print(f"error: {error}")
    files = ", ".join(str(p) for p in loaded.files) or "no config file found"
    checked = f"checked: {files}; the environment; {root / '.env'}"
    print(f"{len(loaded.errors)} problem(s) ({checked})" if loaded.errors else f"ok ({checked})")


def _print_settings(loaded: LoadedSettings, root: Path) -> None:
    """`key = value` lines (TOML, secrets masked), each followed by its origin, after the files' status."""
    user, workspace = user_config_file(), workspace_config_file(root)
    trust = "trusted" if loaded.trusted else "not trusted: guarded settings come from the user's sources only"
    print(f"# user file:      {user}" + ("" if user.is_file() else " (none)"))
    print(f"# workspace file: {workspace}" + ("" if workspace.is_file() else " (none)"))
    print(f"# workspace:      {root} ({trust})")
    lines = list(setting_lines(loaded))
    width = min(max((len(line) for line, _ in lines), default=0), 60)
    for line, origin in lines:
        print(f"{line:<{width}}  # {origin}")
    for error in loaded.errors:
        print(f"warning: {error}", file=sys.stderr)


def setting_lines(loaded: LoadedSettings) -> list[tuple[str, str]]:
    """(`key = value`, origin) for every setting; an object set somewhere gets one line per entry."""
    lines: list[tuple[str, str]] = []
    for name, spec in SPECS.items():
        value = shown_value(name, getattr(loaded.settings, name))
        entries = loaded.entry_origins.get(name)
        if entries and isinstance(value, dict):
            for entry, item in value.items():
                lines.append((f"{spec.key}.{toml_key(entry)} = {toml_value(item)}", entries.get(entry, "")))
        elif value is None:
            lines.append((f"# {spec.key} (unset)", loaded.origin(name)))
        else:
            lines.append((f"{spec.key} = {toml_value(value)}", loaded.origin(name)))
    return lines


def as_json(loaded: LoadedSettings, root: Path) -> dict[str, Any]:
    """`config --json`: the files, the trust, each setting's value (secrets masked), origin and variable."""
    settings: dict[str, Any] = {}
    for name, spec in SPECS.items():
        row = {"value": shown_value(name, getattr(loaded.settings, name)), "origin": loaded.origin(name)}
        if spec.env:
            row["env"] = spec.env
        if name in loaded.entry_origins:
            row["entries"] = dict(loaded.entry_origins[name])
        settings[spec.key] = row
    return {
        "workspace": str(root),
        "trusted": loaded.trusted,
        "files": {"user": str(user_config_file()), "workspace": str(workspace_config_file(root))},
        "found": [str(p) for p in loaded.files],
        "settings": settings,
        "errors": list(loaded.errors),
    }


def shown_value(name: str, value: Any) -> Any:
    """A value safe to print: the API key and MCP servers' env and header values masked (a ${VAR} stays)."""
    if name in SECRET_FIELDS and value:
        return "***"
    if name == "mcp_servers" and isinstance(value, dict):
        return {server: _mask_entry(spec) for server, spec in value.items()}
    return value


def _mask_entry(spec: Any) -> Any:
    """One MCP server with its env and headers values masked unless they are ${VAR} references."""
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in SECRET_ENTRY_KEYS:
        if isinstance(out.get(key), dict):
            out[key] = {k: v if isinstance(v, str) and "${" in v else "***" for k, v in out[key].items()}
    return out


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, quoted otherwise."""
    return key if _BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: Any) -> str:
    """A value in TOML syntax (inline tables for objects)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value), ensure_ascii=False)
