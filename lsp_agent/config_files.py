"""The configuration files (the user's and the workspace's `config.toml`) and workspace trust."""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.config import CLIENT_KEYS, SPECS

WORKSPACE_FILE = Path(".lsp-agent") / "config.toml"
TRUST_KEY = "trustedWorkspaces"  # user file only: the workspaces whose files may grant power
# Settings that let a file run programs, approve the agent's actions, send the user's keys or code to a server it
# names, or write where it likes, and what each would do. A workspace file (config.toml or .env) is part of a
# repository anyone may have written, so these are taken from it only when the user file trusts the workspace
# (VS Code's workspace trust, in one line of the user's file).
GUARDED: dict[str, str] = {
    "permissions": "approves tool calls and edits without asking",
    "mcp_servers": "starts programs and connects to servers",
    "allow_unisolated_exec": "runs code without a sandbox",
    "python": "chooses the program run_python and run_tests start",
    "api_base": "sends your model requests, with your API key and your code, to the server it names",
    "completion_api_base": "sends your completion requests, with your API key and your code, to the server it names",
    "index_store": "sends your workspace's code to the database server it names and feeds its results to the agent",
    "transcript": "chooses where your prompts, the code read and the model's replies are written",
}
# Taken from a workspace only when trusted too: secretFiles' `!` patterns, and a .env's provider variables naming a
# server (OPENAI_API_BASE, ...: the user's provider key would go there).
UNHIDE_REASON = "makes files the built-in patterns hide (.env, private keys) readable to the agent"
SERVER_VARIABLES = ("_API_BASE", "_BASE_URL")
SERVER_REASON = "sends your provider API key, with your code, to the server it names"


@dataclass
class FileValues:
    """What one config file holds: field-name keyed values that passed validation, and what did not."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # field name -> the key as written in the file
    errors: list[str] = field(default_factory=list)
    trusted: list[Path] = field(default_factory=list)  # trustedWorkspaces (the user file only)


def user_config_file() -> Path:
    """The user's file: `$XDG_CONFIG_HOME/lsp-agent/config.toml` on Linux (the OS's config dir elsewhere)."""
    from platformdirs import user_config_path

    return user_config_path("lsp-agent") / "config.toml"


def workspace_config_file(root: Path) -> Path:
    """The workspace's file: `<root>/.lsp-agent/config.toml`."""
    return Path(root) / WORKSPACE_FILE


def flatten_keys(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted keys (`index.exclude`), keeping object-valued settings (permissions...) whole."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted not in CLIENT_KEYS:
            out.update(flatten_keys(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def shown(value: Any) -> str:
    """A value as TOML would spell it, near enough for messages (strings quoted, lists bracketed)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def unknown_key(key: str) -> str:
    """`unknown setting 'x'`, with the closest real key when there is one."""
    close = difflib.get_close_matches(key, [*CLIENT_KEYS, TRUST_KEY], n=1)
    return f"unknown setting {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def read_config_file(path: Path, *, user: bool) -> FileValues:
    """The settings of one config file, each validated by its declaration; errors name the file and the key.

    A missing file holds nothing; a file that is not valid TOML is reported and skipped whole; a bad value is
    reported and left out, so the next source's value applies.
    """
    found = FileValues(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return found
    except (OSError, UnicodeDecodeError) as exc:
        found.errors.append(f"{path}: cannot read the config file: {exc}")
        return found
    except tomllib.TOMLDecodeError as exc:
        found.errors.append(f"{path}: not valid TOML ({exc}); the file is ignored")
        return found
    for key, raw in flatten_keys(_settings_tree(data)).items():
        key = key.removeprefix("lspAgent.")
        if key == TRUST_KEY:
            _read_trust(found, raw, user)
            continue
        name = CLIENT_KEYS.get(key)
        if name is None:
            found.errors.append(f"{path}: {unknown_key(key)}")
            continue
        try:
            SPECS[name].parse(raw)
        except ValueError as exc:
            found.errors.append(
                f"{path}: {key} = {shown(raw)}: {exc} (ignored: the next source's value applies)"
            )
            continue
        found.values[name], found.keys[name] = raw, key
    return found


def _settings_tree(data: Mapping[str, Any]) -> dict[str, Any]:
    """A file's settings, with an `[lspAgent]` table (settings.json's section, copied) merged over the top."""
    if isinstance(data.get("lspAgent"), Mapping):
        return {**{k: v for k, v in data.items() if k != "lspAgent"}, **data["lspAgent"]}
    return dict(data)


def _read_trust(found: FileValues, raw: Any, user: bool) -> None:
    """trustedWorkspaces: paths (`~` allowed) from the user file; a workspace file cannot trust itself."""
    if not user:
        found.errors.append(
            f"{found.path}: {TRUST_KEY} is read from the user file only ({user_config_file()}); ignored"
        )
        return
    if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
        found.errors.append(
            f'{found.path}: {TRUST_KEY} = {shown(raw)}: expected a list of paths, e.g. ["~/src"]'
        )
        return
    found.trusted = [Path(p.strip()).expanduser().resolve() for p in raw]


def workspace_trusted(root: Path | None, trusted: Sequence[Path]) -> bool:
    """Whether the workspace is one of the trusted paths or inside one."""
    if root is None:
        return False
    here = Path(root).expanduser().resolve()
    return any(here == path or here.is_relative_to(path) for path in trusted)


def user_trusts(root: Path | None) -> bool:
    """Whether the user file trusts this workspace (what MCP config files ask before starting its servers)."""
    return workspace_trusted(root, read_config_file(user_config_file(), user=True).trusted)


def refusal(where: str, key: str, name: str, root: Path) -> str:
    """The message for a guarded setting a workspace file set without trust: why, and the two ways to do it."""
    return refusal_of(where, key, GUARDED.get(name, name), root)


def refusal_of(where: str, key: str, reason: str, root: Path) -> str:
    """The refusal of `key` (which `reason`s) from a workspace file: why, and the two ways to have it anyway."""
    return (
        f"{where}: {key} is not taken from a workspace file (it {reason}, and a cloned repository must not decide "
        f"that); set it in your user file {user_config_file()} or your environment, or trust this workspace in "
        f'your user file: {TRUST_KEY} = ["{Path(root).resolve()}"] (`lsp-agent config --trust` adds it)'
    )


def guard_workspace(
    values: Mapping[str, Any], keys: Mapping[str, str], where: str, root: Path, trusted: bool
) -> tuple[dict[str, Any], list[str]]:
    """Workspace values without the guarded settings (unless trusted), and a refusal for each one left out."""
    if trusted:
        return dict(values), []
    kept = {name: raw for name, raw in values.items() if name not in GUARDED}
    refused = [refusal(where, keys.get(name, name), name, root) for name in values if name in GUARDED]
    patterns = kept.get("secret_files")
    if isinstance(patterns, list) and any(_unhides(p) for p in patterns):
        kept["secret_files"] = [p for p in patterns if not _unhides(p)]
        key = keys.get("secret_files", "secretFiles")
        refused.append(refusal_of(where, f"{key}'s `!` patterns", UNHIDE_REASON, root))
    return kept, refused


def guard_server_variables(
    variables: Mapping[str, str], where: str, root: Path, trusted: bool
) -> tuple[dict[str, str], list[str]]:
    """A workspace .env's provider variables without those naming a server (unless trusted), and the refusals."""
    if trusted:
        return dict(variables), []
    names = [name for name in variables if name.endswith(SERVER_VARIABLES)]
    return (
        {name: value for name, value in variables.items() if name not in names},
        [refusal_of(where, name, SERVER_REASON, root) for name in names],
    )


def _unhides(pattern: Any) -> bool:
    """Whether a secretFiles pattern is a negation (re-includes files the other patterns hide)."""
    return isinstance(pattern, str) and pattern.lstrip().startswith("!")


def trust_workspace(root: Path) -> tuple[Path, bool]:
    """Add `root` to trustedWorkspaces in the user file, keeping the rest of the file as written.

    Returns (the user file, whether it changed); ValueError when the file cannot be read or rewritten safely.
    """
    path, here = user_config_file(), Path(root).expanduser().resolve()
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc}); fix it first") from None
    current = _settings_tree(data).get(TRUST_KEY, [])
    if not isinstance(current, list):
        raise ValueError(f"{path}: {TRUST_KEY} is not a list; fix it first")
    if workspace_trusted(here, [Path(str(p)).expanduser().resolve() for p in current]):
        return path, False
    wanted = [*current, str(here)]
    line = f"{TRUST_KEY} = {json.dumps(wanted, ensure_ascii=False)}"
    pattern = re.compile(rf"^{TRUST_KEY}\s*=\s*\[[^\]]*\][^\n]*$", re.M)
    new = pattern.sub(lambda _: line, text, count=1) if TRUST_KEY in data else f"{line}\n{text}"
    if (
        _settings_tree(tomllib.loads(new)).get(TRUST_KEY) != wanted
    ):  # written some other way (a table, a dotted key...)
        raise ValueError(f'{path}: cannot add the workspace safely; add "{here}" to {TRUST_KEY} by hand')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, encoding="utf-8")
    return path, True
