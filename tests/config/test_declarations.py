"""Each setting is declared once: its editor key, environment variable, parser and description live together."""

from __future__ import annotations

import dataclasses

import pytest

from lsp_agent.config import CLIENT_KEYS, ENV_VARS, SPECS, Settings
from lsp_agent.settings_sources import load_settings


def test_every_field_is_declared_with_a_description_and_a_unique_key() -> None:
    names = [f.name for f in dataclasses.fields(Settings)]
    assert sorted(SPECS) == sorted(names)
    keys = [spec.key for spec in SPECS.values()] + [a for spec in SPECS.values() for a in spec.aliases]
    assert len(keys) == len(set(keys))
    for name, spec in SPECS.items():
        assert spec.doc.strip(), name
        assert CLIENT_KEYS[spec.key] == name
        if spec.env:
            assert spec.env.startswith("LSP_AGENT_") and ENV_VARS[name] == (spec.env,)


def test_each_default_passes_its_own_parser() -> None:
    defaults = Settings()
    for name, spec in SPECS.items():
        value = getattr(defaults, name)
        if value is not None:
            assert spec.parse(value) == value, name


def test_list_and_dict_defaults_are_not_shared() -> None:
    first, second = Settings(), Settings()
    first.index_exclude.append("*.log")
    first.permissions["run_python"] = "allow"
    assert second.index_exclude == [] and second.permissions == {}


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("maxIterations", True, "expected a positive whole number"),
        ("maxIterations", 2.5, "expected a positive whole number"),
        ("tokenBudget", "lots", "expected a positive whole number"),
        ("compactionThreshold", 0.05, "expected a number between 0.1 and 1.0"),
        ("execTimeout", False, "expected a number"),
        ("requestTimeout", -1, "expected a positive number"),
        ("plan", "maybe", "expected true or false"),
        ("style", "freeform", "expected one of react, codeact"),
        ("embeddings", "", "expected 'none', 'local' or a litellm embedding model string"),
        ("model", 42, "expected a string"),
        ("index.exclude", [1], "expected a list of gitignore-style patterns"),
    ],
)
def test_a_bad_value_is_named_with_what_is_expected_and_falls_back(tmp_path, key, raw, expected) -> None:
    head, _, tail = key.partition(".")
    client = {head: {tail: raw}} if tail else {key: raw}
    settings, errors = load_settings(tmp_path, client=client, environ={})
    name = CLIENT_KEYS[key]
    assert len(errors) == 1 and f"setting {name!r} has a bad value" in errors[0] and expected in errors[0]
    assert getattr(settings, name) == getattr(Settings(), name)


def test_environment_words_for_booleans_and_numbers(tmp_path) -> None:
    settings, errors = load_settings(
        tmp_path, environ={"LSP_AGENT_MAX_ITERATIONS": " 12 ", "LSP_AGENT_TOOL_CALLING": "PROMPT"}
    )
    assert errors == [] and settings.max_iterations == 12 and settings.tool_calling == "prompt"
    assert Settings().replace(plan="off").plan is False and Settings().replace(plan="YES").plan is True
