"""Parsers for setting values: each turns a raw value into its type or raises ValueError saying what is expected."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
PERMISSION_VALUES = ("allow", "deny")


def optional_text(value: Any) -> str | None:
    """A string, stripped; empty or null means unset."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value.strip() or None


def text(expected: str) -> Callable[[Any], str]:
    """A parser for a non-empty string, whose error says `expected`."""

    def parse(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"expected {expected}")
        return value.strip()

    return parse


def positive_int(value: Any) -> int:
    """A whole number above zero (a numeric string counts; a bool or a fraction does not)."""
    message = "expected a positive whole number"
    if isinstance(value, bool):
        raise ValueError(message)
    try:
        number = int(value.strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if (not isinstance(value, str) and number != value) or number <= 0:
        raise ValueError(message)
    return number


def whole_number(value: Any) -> int:
    """A whole number of zero or more (0 turns a feature off)."""
    if value in (0, "0") and not isinstance(value, bool):
        return 0
    try:
        return positive_int(value)
    except ValueError:
        raise ValueError("expected a whole number of zero or more") from None


def optional_positive_int(value: Any) -> int | None:
    """A positive whole number, or null for unset."""
    return None if value is None else positive_int(value)


def positive_number(value: Any) -> float:
    """A number above zero."""
    number = _number(value)
    if number <= 0:
        raise ValueError("expected a positive number")
    return number


def optional_positive_number(value: Any) -> float | None:
    """A number above zero, or null for unset."""
    return None if value is None or value == "" else positive_number(value)


def model_list(value: Any) -> list[str]:
    """litellm model strings (a comma-separated string counts), without blanks or repeats."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError('expected a list of litellm model strings, e.g. ["openai/gpt-4o-mini"]')
    return list(dict.fromkeys(v.strip() for v in value if v.strip()))


def number_between(low: float, high: float) -> Callable[[Any], float]:
    """A parser for a number in [low, high]."""

    def parse(value: Any) -> float:
        number = _number(value)
        if not low <= number <= high:
            raise ValueError(f"expected a number between {low} and {high}")
        return number

    return parse


def _number(value: Any) -> float:
    """Any real number (not a bool)."""
    if isinstance(value, bool):
        raise ValueError("expected a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("expected a number") from None


def boolean(value: Any) -> bool:
    """true/false, or the usual words for them in the environment (1/0, yes/no, on/off)."""
    if isinstance(value, bool):
        return value
    word = value.strip().lower() if isinstance(value, str) else None
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise ValueError("expected true or false")


def choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    """A parser for one of `options` (case-insensitive)."""

    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.strip().lower() not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return value.strip().lower()

    return parse


def optional_choice(options: tuple[str, ...]) -> Callable[[Any], str | None]:
    """A parser for one of `options` (case-insensitive); empty or null means unset."""
    parse_choice = choice(options)
    return lambda value: None if value is None or value == "" else parse_choice(value)


def pattern_list(value: Any) -> list[str]:
    """A list of gitignore-style patterns (a comma-separated string counts)."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of gitignore-style patterns")
    return list(value)


def permission_rules(value: Any) -> dict[str, str]:
    """{"tool": "allow"|"deny"}, {"allow": [tools], "deny": [tools]} or a list of allowed tools."""
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


def mcp_servers(value: Any) -> dict[str, dict[str, Any]]:
    """The editors' usual shape: {name: {command, args?, env?} | {url}}."""
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


# Fill-in-the-middle prompts of code models that were trained with them ({prefix} and {suffix} are filled in).
INFILL_PRESETS = {
    "qwen": "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",  # Qwen2.5-Coder, CodeGemma
    "starcoder": "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",  # StarCoder, StarCoder2
    "deepseek": "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",  # DeepSeek-Coder
    "codellama": "<PRE> {prefix} <SUF>{suffix} <MID>",  # Code Llama
}


def infill_template(value: Any) -> str | None:
    """A fill-in-the-middle prompt: `auto` (the preset the model's name calls for), a preset's name or a template
    with {prefix} and {suffix}; empty means off."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("expected auto, a preset name or a template string")
    if value.strip() in ("auto", *INFILL_PRESETS):
        return value.strip()  # agent/repair/line_infill.py resolves auto and fills in the preset's template
    if "{prefix}" not in value or "{suffix}" not in value:
        raise ValueError(
            f"expected auto, one of {', '.join(INFILL_PRESETS)} or a template with {{prefix}} and {{suffix}}"
        )
    return value
