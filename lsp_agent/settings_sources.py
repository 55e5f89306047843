"""Where settings come from: command-line flags, editor settings, the environment, the workspace `.env`, defaults.

Precedence, highest first: flags, editor settings, the environment, the workspace `.env`, defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.config import CLIENT_KEYS, EDITOR_ONLY_PREFIXES, SPECS, Settings, merge_values


def _flatten(client: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested editor settings into dotted keys, keeping known object-valued settings whole."""
    out: dict[str, Any] = {}
    for key, value in client.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted not in CLIENT_KEYS:
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def client_values(client: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Map editor settings (camelCase, optionally under `lspAgent`) to field names; unknown keys are errors."""
    if isinstance(client.get("lspAgent"), Mapping):
        client = client["lspAgent"]
    values: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in _flatten(client).items():
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


def export_provider_keys(root: Path | None) -> None:
    """Put provider key variables from the workspace .env (OPENAI_API_KEY, ...) into os.environ if unset."""
    for key, value in read_dotenv(root).items():
        if key.endswith("_API_KEY") or key.endswith("_API_BASE") or key.endswith("_BASE_URL"):
            os.environ.setdefault(key, value)


def load_settings(
    root: Path | None,
    *,
    flags: Mapping[str, Any] | None = None,
    client: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Settings, list[str]]:
    """Settings from all sources, highest first: flags, editor settings, environment, workspace .env, defaults.

    The environment and .env fill the gaps of what the user set explicitly (flags on the CLI, settings in the
    editor). Returns (settings, errors); each error names the bad setting, whose value falls back to the next source.
    """
    settings = Settings()
    errors: list[str] = []
    layers: list[tuple[str, Mapping[str, Any]]] = [
        (".env", env_values(read_dotenv(root))),
        ("environment", env_values(os.environ if environ is None else environ)),
    ]
    if client:
        values, client_errors = client_values(client)
        errors.extend(client_errors)
        layers.append(("editor settings", values))
    if flags:
        layers.append(("command line", {k: v for k, v in flags.items() if v is not None}))
    for source, values in layers:
        settings, layer_errors = merge_values(settings, values, source)
        errors.extend(layer_errors)
    return settings, errors
