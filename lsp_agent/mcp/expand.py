"""`${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${workspaceFolder}` and `${userHome}` in MCP server settings."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"^(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)


class ExpansionError(ValueError):
    """A reference that cannot be filled in: an unset variable or an unsupported kind of reference."""


def expand(
    text: str, where: str, *, environ: Mapping[str, str] | None = None, root: Path | None = None
) -> str:
    """`text` with every `${...}` reference filled in; ExpansionError names the field (`where`) and the fix."""
    env = os.environ if environ is None else environ

    def fill(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if inner == "workspaceFolder":
            if root is None:
                raise ExpansionError(
                    f"{where} uses ${{workspaceFolder}}, but there is no workspace folder here"
                )
            return str(root)
        if inner == "userHome":
            return str(Path.home())
        parsed = _NAME.match(inner)
        if parsed is None:
            raise ExpansionError(
                f"{where} uses {match.group(0)}, which lsp-agent cannot fill in (supported: ${{VAR}}, "
                "${env:VAR}, ${VAR:-default}, ${workspaceFolder}, ${userHome})"
            )
        name, default = parsed.group(1), parsed.group(2)
        value = env.get(name)
        if value is not None and (value != "" or default is None):
            return value
        if default is not None:
            return default
        raise ExpansionError(
            f"{where} uses {match.group(0)}, but the environment variable {name} is not set; set it in the "
            f"environment the language server (or lsp-agent) starts with, or give a default: ${{{name}:-value}}"
        )

    return _REFERENCE.sub(fill, text) if "${" in text else text
