"""The VS Code manifest and the server agree: every setting the server reads is declared, with its default, its
choices, its environment variable and the real precedence, and the extension activates and ships as documented."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from lsp_agent.config import EDITOR_ONLY_PREFIXES, SPECS, Settings

MANIFEST = Path(__file__).resolve().parents[2] / "editor-clients" / "vscode" / "package.json"


@pytest.fixture(scope="module")
def properties() -> dict[str, dict]:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    props = manifest["contributes"]["configuration"]["properties"]
    return {k.removeprefix("lspAgent."): v for k, v in props.items()}


def _default(field: dataclasses.Field) -> object:
    return field.default_factory() if field.default is dataclasses.MISSING else field.default  # type: ignore[misc]


def test_every_setting_the_server_reads_is_declared_with_the_servers_default(properties) -> None:
    declared = {k for k in properties if not k.startswith(EDITOR_ONLY_PREFIXES)}
    assert declared == {spec.key for spec in SPECS.values()}
    for field in dataclasses.fields(Settings):
        key = SPECS[field.name].key
        assert properties[key]["default"] == _default(field), key


def test_every_declared_value_is_one_the_server_accepts(properties) -> None:
    for spec in SPECS.values():
        entry = properties[spec.key]
        for value in entry.get("enum", []):
            assert spec.parse(value) == value, (spec.key, value)
        if entry["default"] is not None:
            spec.parse(entry["default"])
    for value in ({"run_tests": "allow"}, {"allow": ["run_tests"], "deny": ["run_command"]}, ["run_tests"]):
        SPECS["permissions"].parse(value)  # the three shapes the description shows
    text = properties["permissions"]["markdownDescription"]
    for shown in (
        '{"run_tests": "allow"',
        '{"allow": ["run_tests"], "deny": ["run_command"]}',
        '`["run_tests"]`',
    ):
        assert shown in text
    assert set(properties["permissions"]["type"]) == {"object", "array"}


def test_descriptions_state_the_precedence_the_code_has(properties) -> None:
    for spec in SPECS.values():
        text = properties[spec.key].get("markdownDescription") or properties[spec.key].get("description", "")
        assert text, spec.key
        if spec.env:
            assert f"then `{spec.env}` in the environment" in text, spec.key
        assert "takes precedence" not in text, spec.key  # the old, wrong claim (the environment never wins)


def test_activation_waits_for_a_workspace_and_the_extension_ships_bundled() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    assert "*" not in manifest["activationEvents"]
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["scripts"]["vscode:prepublish"] == "npm run bundle"
    assert "esbuild" in manifest["scripts"]["bundle"] and "--bundle" in manifest["scripts"]["bundle"]
    assert "esbuild" in manifest["devDependencies"]
