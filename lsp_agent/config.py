"""One settings model for the CLI and the server: flags > env > workspace .env > editor settings > defaults."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOOL_CALLING_MODES = ("auto", "native", "prompt")
STYLES = ("react", "codeact")
MERGE_SYSTEM_MODES = ("auto", "always", "never")
PERMISSION_VALUES = ("allow", "deny")

# Environment variables read for each setting (first match wins).
ENV_VARS: dict[str, tuple[str, ...]] = {
    "model": ("LSP_AGENT_MODEL",),
    "api_base": ("LSP_AGENT_API_BASE",),
    "api_key": ("LSP_AGENT_API_KEY",),
    "tool_calling": ("LSP_AGENT_TOOL_CALLING",),
    "max_iterations": ("LSP_AGENT_MAX_ITERATIONS",),
    "embeddings": ("LSP_AGENT_EMBEDDINGS",),
    "style": ("LSP_AGENT_STYLE",),
    "python": ("LSP_AGENT_PYTHON",),
    "allow_unisolated_exec": ("LSP_AGENT_ALLOW_UNISOLATED_EXEC",),
}

# Editor (camelCase, section `lspAgent`) key -> field name; dotted keys reach into nested objects.
CLIENT_KEYS: dict[str, str] = {
    "model": "model",
    "apiBase": "api_base",
    "apiKey": "api_key",
    "toolCalling": "tool_calling",
    "style": "style",
    "plan": "plan",
    "maxIterations": "max_iterations",
    "tokenBudget": "token_budget",
    "contextWindow": "context_window",
    "compactionThreshold": "compaction_threshold",
    "compactionSummary": "compaction_summary",
    "mergeSystemPrompt": "merge_system_prompt",
    "embeddings": "embeddings",
    "index.exclude": "index_exclude",
    "index.maxFileSize": "max_file_size",
    "indexExclude": "index_exclude",
    "maxFileSize": "max_file_size",
    "permissions": "permissions",
    "mcpServers": "mcp_servers",
    "execTimeout": "exec_timeout",
    "python": "python",
    "allowUnisolatedExec": "allow_unisolated_exec",
    "requestTimeout": "request_timeout",
    "transcript": "transcript",
}

# Keys of the `lspAgent` section that belong to the editor client (how it starts the server, LSP tracing).
EDITOR_ONLY_PREFIXES = ("server.", "trace.")


class ModelNotConfigured(Exception):
    """Raised when a run needs a model and none is set; the message says where to set one."""

    def __init__(self, where: str = "cli") -> None:
        if where == "editor":
            hint = (
                "no model configured: set the `lspAgent.model` setting (e.g. openai/gpt-4o-mini, "
                "anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder) or the LSP_AGENT_MODEL environment variable "
                "(a .env file in the workspace works too)"
            )
        else:
            hint = (
                "no model configured: pass --model (e.g. --model openai/gpt-4o-mini) or set LSP_AGENT_MODEL "
                "(in the environment or a .env file in the workspace)"
            )
        super().__init__(hint)


@dataclass
class Settings:
    """Everything a run, the index and the server can be configured with."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    tool_calling: str = "auto"
    style: str = "react"
    plan: bool = False
    max_iterations: int = 30
    token_budget: int | None = None
    context_window: int | None = None
    compaction_threshold: float = 0.8
    compaction_summary: bool = False
    merge_system_prompt: str = "auto"
    embeddings: str = "none"
    index_exclude: list[str] = field(default_factory=list)
    max_file_size: int = 1_000_000
    permissions: dict[str, str] = field(default_factory=dict)
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    exec_timeout: float = 60.0
    python: str | None = None  # interpreter for run_python/run_tests (default: the workspace venv)
    allow_unisolated_exec: bool = False  # run code even where no sandbox mechanism works (the result says so)
    request_timeout: float = 120.0
    transcript: str | None = None

    def require_model(self, where: str = "cli") -> str:
        """The model string, or ModelNotConfigured with a message saying where to set it."""
        if not self.model:
            raise ModelNotConfigured(where)
        return self.model

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated like any other source)."""
        merged, errors = _merge(self, changes, source="override")
        if errors:
            raise ValueError("; ".join(errors))
        return merged


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


def _coerce(name: str, value: Any) -> Any:
    """Convert a raw value to the type of field `name`, or raise ValueError saying what is expected."""
    if name in ("model", "api_base", "api_key", "transcript", "python"):
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value.strip() or None
    if name in ("max_iterations", "max_file_size", "token_budget", "context_window"):
        if value is None and name in ("token_budget", "context_window"):
            return None
        if isinstance(value, bool):
            raise ValueError("expected a positive whole number")
        try:
            number = int(str(value).strip()) if isinstance(value, str) else int(value)
        except (TypeError, ValueError):
            raise ValueError("expected a positive whole number") from None
        if number != value and not isinstance(value, str) or number <= 0:
            raise ValueError("expected a positive whole number")
        return number
    if name in ("compaction_threshold", "exec_timeout", "request_timeout"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError("expected a number") from None
        if name == "compaction_threshold" and not 0.1 <= number <= 1.0:
            raise ValueError("expected a number between 0.1 and 1.0")
        if number <= 0:
            raise ValueError("expected a positive number")
        return number
    if name in ("plan", "compaction_summary", "allow_unisolated_exec"):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in (
            "1",
            "true",
            "yes",
            "on",
            "0",
            "false",
            "no",
            "off",
        ):
            return value.strip().lower() in ("1", "true", "yes", "on")
        raise ValueError("expected true or false")
    choices = {"tool_calling": TOOL_CALLING_MODES, "style": STYLES, "merge_system_prompt": MERGE_SYSTEM_MODES}
    if name in choices:
        if not isinstance(value, str) or value.strip().lower() not in choices[name]:
            raise ValueError(f"expected one of {', '.join(choices[name])}")
        return value.strip().lower()
    if name == "embeddings":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("expected 'none', 'local' or a litellm embedding model string")
        return value.strip()
    if name == "index_exclude":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of gitignore-style patterns")
        return list(value)
    if name == "permissions":
        return _coerce_permissions(value)
    if name == "mcp_servers":
        return _coerce_mcp_servers(value)
    raise ValueError("unknown setting")


def _coerce_permissions(value: Any) -> dict[str, str]:
    """Accept {"tool": "allow"|"deny"} or {"allow": [tools], "deny": [tools]} or a list of allowed tools."""
    if isinstance(value, list):
        value = {"allow": value}
    if not isinstance(value, Mapping):
        raise ValueError('expected {"tool_name": "allow" | "deny"} or {"allow": [...], "deny": [...]}')
    out: dict[str, str] = {}
    for key, item in value.items():
        if key in PERMISSION_VALUES and isinstance(item, list):
            for tool in item:
                if not isinstance(tool, str):
                    raise ValueError(f"expected tool names in the {key!r} list")
                out[tool] = key
        elif isinstance(item, str) and item.lower() in PERMISSION_VALUES:
            out[str(key)] = item.lower()
        else:
            raise ValueError(f'expected "allow" or "deny" for {key!r}')
    return out


def _coerce_mcp_servers(value: Any) -> dict[str, dict[str, Any]]:
    """Accept the editors' usual shape: {name: {command, args?, env?} | {url}}."""
    if not isinstance(value, Mapping):
        raise ValueError('expected {"name": {"command": ..., "args": [...]}} or {"name": {"url": ...}}')
    out: dict[str, dict[str, Any]] = {}
    for name, spec in value.items():
        if not isinstance(spec, Mapping) or not (
            isinstance(spec.get("command"), str) or isinstance(spec.get("url"), str)
        ):
            raise ValueError(f"server {name!r} needs a 'command' (stdio) or a 'url' (streamable HTTP)")
        if "args" in spec and not (
            isinstance(spec["args"], list) and all(isinstance(a, str) for a in spec["args"])
        ):
            raise ValueError(f"server {name!r}: 'args' must be a list of strings")
        if "env" in spec and not isinstance(spec["env"], Mapping):
            raise ValueError(f"server {name!r}: 'env' must be an object")
        out[str(name)] = dict(spec)
    return out


def _merge(base: Settings, values: Mapping[str, Any], source: str) -> tuple[Settings, list[str]]:
    """Apply field-name keyed values to a copy of base; invalid ones are reported and skipped."""
    changes: dict[str, Any] = {}
    errors: list[str] = []
    fields = {f.name for f in dataclasses.fields(Settings)}
    for name, raw in values.items():
        if name not in fields:
            errors.append(f"{source}: unknown setting {name!r}")
            continue
        try:
            changes[name] = _coerce(name, raw)
        except ValueError as exc:
            errors.append(f"{source}: setting {name!r} has a bad value {raw!r}: {exc}; using the default")
    return dataclasses.replace(base, **changes), errors


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
    values: dict[str, Any] = {}
    for name, variables in ENV_VARS.items():
        for var in variables:
            if environ.get(var):
                values[name] = environ[var]
                break
    return values


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
        settings, layer_errors = _merge(settings, values, source)
        errors.extend(layer_errors)
    return settings, errors
