"""How a setting is declared: its editor key, environment variable, parser and description, beside its default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Spec:
    """How one setting is named in the editor and the environment, checked, and described."""

    key: str  # editor key under `lspAgent` (camelCase; a dotted key reaches into an object)
    doc: str
    parse: Callable[[Any], Any]  # raw value -> typed value, or ValueError saying what is expected
    env: str | None = None
    aliases: tuple[str, ...] = ()  # other editor keys accepted for the same setting


def setting(
    default: Any,
    key: str,
    doc: str,
    parse: Callable[[Any], Any],
    *,
    env: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Any:
    """A Settings field with its declaration; list and dict defaults are copied for each instance."""
    meta = {"spec": Spec(key, doc, parse, env, aliases)}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)
