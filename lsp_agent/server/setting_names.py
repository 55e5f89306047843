"""Settings errors worded for the editor: a bad setting is named the way the user wrote it."""

from __future__ import annotations

import re

from lsp_agent.config import CLIENT_KEYS, ENV_VARS

_BAD_VALUE = re.compile(r"^(editor settings|environment|\.env): setting '(\w+)' (.*)$", re.S)
_EDITOR_NAMES: dict[str, str] = {}
for _key, _field in CLIENT_KEYS.items():
    _EDITOR_NAMES.setdefault(
        _field, _key
    )  # the first spelling listed (e.g. index.exclude) is the documented one


def editor_wording(error: str) -> str:
    """'editor settings: setting 'max_iterations' has ...' -> 'lspAgent.maxIterations has ...' (env: the variable)."""
    match = _BAD_VALUE.match(error)
    if match is None:
        return error
    source, field, rest = match.groups()
    if source == "editor settings" and field in _EDITOR_NAMES:
        return f"setting lspAgent.{_EDITOR_NAMES[field]} {rest}"
    if field in ENV_VARS:
        where = "the environment" if source == "environment" else "the workspace .env"
        return f"{ENV_VARS[field][0]} (in {where}) {rest}"
    return error
