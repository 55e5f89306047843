"""Check and lightly coerce a model's tool arguments against the tool's JSON schema."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_INT_RE = re.compile(r"^[+-]?\d+$")
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


class _Invalid(Exception):
    """One argument that does not fit its schema."""


def validate_arguments(
    schema: dict[str, Any], arguments: dict[str, Any] | str | None
) -> tuple[dict[str, Any], list[str]]:
    """(clean arguments, errors): parses JSON strings, drops nulls for optional parameters, coerces harmless
    mismatches ("5" -> 5 for integers, "true" -> True for booleans) and names every bad, missing or unknown
    parameter. An empty error list means the arguments are fit to call the tool with."""
    parsed, error = _parse(arguments)
    if error:
        return {}, [error]
    props: dict[str, Any] = schema.get("properties") or {}
    required: list[str] = list(schema.get("required") or [])
    # As in JSON Schema, keys outside "properties" are allowed unless additionalProperties says otherwise
    # (false, or a schema they must match). MCP servers rely on that; the built-in tools set it to false.
    extra = schema.get("additionalProperties", True)
    clean: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in parsed.items():
        if key not in props:
            if extra is False:
                known = ", ".join(props) or "none"
                errors.append(f"unknown parameter {key!r} (valid parameters: {known})")
            elif isinstance(extra, dict) and extra:
                try:
                    clean[key] = _coerce(key, value, extra)
                except _Invalid as exc:
                    errors.append(str(exc))
            else:
                clean[key] = value
            continue
        if value is None and not _allows_null(props[key]):
            continue  # models often send null for "not given"; a required one is reported missing below
        try:
            clean[key] = _coerce(key, value, props[key])
        except _Invalid as exc:
            errors.append(str(exc))
    for key in required:
        if key not in clean and not any(e.startswith(f"{key!r}") for e in errors):
            errors.append(f"missing required parameter {key!r}")
    return clean, errors


def describe_parameters(schema: dict[str, Any]) -> str:
    """A compact human list such as 'path (string, required), start_line (integer)'."""
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for key, spec in props.items():
        kind = spec.get("type", "any")
        kind = "|".join(kind) if isinstance(kind, list) else kind
        parts.append(f"{key} ({kind}{', required' if key in required else ''})")
    return ", ".join(parts) or "none"


def _parse(arguments: dict[str, Any] | str | None) -> tuple[dict[str, Any], str | None]:
    """Arguments as a dict, or an error saying why they are not a JSON object."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, str):
        text = arguments.strip()
        if not text:
            return {}, None
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError as exc:
            return (
                {},
                f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); send a JSON object",
            )
    if not isinstance(arguments, dict):
        return {}, f"arguments must be a JSON object, got {type(arguments).__name__}"
    return arguments, None


def _allows_null(spec: dict[str, Any]) -> bool:
    kind = spec.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def _coerce(key: str, value: Any, spec: dict[str, Any]) -> Any:
    """The value converted to the schema's type, or _Invalid naming the parameter."""
    kinds = spec.get("type")
    if kinds is None:
        result = value
    else:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        result, problems = None, []
        for kind in kinds:
            try:
                result = _coerce_one(key, value, kind)
                break
            except _Invalid as exc:
                problems.append(str(exc))
        else:
            raise _Invalid(
                problems[0] if len(problems) == 1 else f"{key!r} must be one of types {', '.join(kinds)}"
            )
    _check_constraints(key, result, spec)
    return result


def _coerce_one(key: str, value: Any, kind: str) -> Any:
    """`value` as the JSON type `kind` (lightly coerced: "3" -> 3, "true" -> True, a JSON string -> a list)."""
    coerce = _COERCERS.get(kind)
    return value if coerce is None else coerce(key, value, _show(value))


def _to_string(key: str, value: Any, shown: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise _Invalid(f"{key!r} must be a string, got {shown}")


def _to_integer(key: str, value: Any, shown: str) -> int:
    if isinstance(value, bool):
        raise _Invalid(f"{key!r} must be an integer, got {shown}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.match(value.strip()):
        return int(value.strip())
    raise _Invalid(f"{key!r} must be an integer, got {shown}")


def _to_number(key: str, value: Any, shown: str) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _Invalid(f"{key!r} must be a number, got {shown}")


def _to_boolean(key: str, value: Any, shown: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _Invalid(f"{key!r} must be true or false, got {shown}")


def _json_container(value: Any, kind: type, opener: str) -> Any:
    """value itself when it is a `kind`, or the `kind` a JSON string starting with `opener` holds; else None."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value.strip().startswith(opener):
        try:
            loaded = json.loads(value)
        except json.JSONDecodeError:
            return None
        return loaded if isinstance(loaded, kind) else None
    return None


def _to_array(key: str, value: Any, shown: str) -> list:
    loaded = _json_container(value, list, "[")
    if loaded is None:
        raise _Invalid(f"{key!r} must be an array, got {shown}")
    return loaded


def _to_object(key: str, value: Any, shown: str) -> dict:
    loaded = _json_container(value, dict, "{")
    if loaded is None:
        raise _Invalid(f"{key!r} must be an object, got {shown}")
    return loaded


def _to_null(key: str, value: Any, shown: str) -> None:
    if value is not None:
        raise _Invalid(f"{key!r} must be null, got {shown}")


_COERCERS: dict[str, Callable[[str, Any, str], Any]] = {
    "string": _to_string,
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "array": _to_array,
    "object": _to_object,
    "null": _to_null,
}


def _check_constraints(key: str, value: Any, spec: dict[str, Any]) -> None:
    """enum, minimum and maximum."""
    if "enum" in spec and value not in spec["enum"]:
        options = ", ".join(repr(v) for v in spec["enum"])
        raise _Invalid(f"{key!r} must be one of {options}, got {_show(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in spec and value < spec["minimum"]:
            raise _Invalid(f"{key!r} must be at least {spec['minimum']}, got {value}")
        if "maximum" in spec and value > spec["maximum"]:
            raise _Invalid(f"{key!r} must be at most {spec['maximum']}, got {value}")


def _show(value: Any) -> str:
    """A short rendering of a bad value for error messages."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    kind = "string" if isinstance(value, str) else type(value).__name__
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}"
