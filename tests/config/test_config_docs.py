"""docs/configuration.md is generated from the declarations: it fails here when it is stale."""

from __future__ import annotations

import re
from pathlib import Path

from lsp_agent.cli.config_docs import REGENERATE, reference_page
from lsp_agent.config import SPECS
from lsp_agent.config_files import read_config_file
from lsp_agent.settings_sources import PRECEDENCE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_page_is_what_the_declarations_generate() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference_page(), (
        f"docs/configuration.md is stale: regenerate it with `{REGENERATE}`"
    )


def test_every_setting_has_a_row_with_its_key_variable_and_default() -> None:
    page = reference_page()
    for spec in SPECS.values():
        (row,) = [line for line in page.splitlines() if line.startswith(f"| `{spec.key}`")]
        if spec.env:
            assert f"`{spec.env}`" in row
    assert "| `maxIterations` | `LSP_AGENT_MAX_ITERATIONS` | `30` | yes |" in page
    assert "| `permissions` |  | `{}` | trusted only |" in page


def test_the_precedence_table_is_the_one_in_settings_sources() -> None:
    import lsp_agent.settings_sources as sources

    documented = re.findall(r"^\| (command line|editor settings|environment|workspace \.env|workspace file|"
                            r"user file|default) \|", sources.__doc__ or "", re.M)  # fmt: skip
    assert documented == [source for source, _, _ in PRECEDENCE]
    for source, where, note in PRECEDENCE:  # the docstring's rows say the same as the generated page's
        assert f"| {source} | {where} | {note} |".replace("|  |", "| |") in (sources.__doc__ or "")
    assert [
        line.split(" | ")[1] for line in reference_page().splitlines() if re.match(r"^\| \d \|", line)
    ] == (documented)


def test_the_example_file_on_the_page_is_valid(tmp_path: Path) -> None:
    (example,) = re.findall(r"```toml\n(.*?)```", reference_page(), re.S)[:1]
    path = tmp_path / "config.toml"
    path.write_text(example)
    found = read_config_file(path, user=True)
    assert found.errors == []
    assert found.values["context_window"] == 16384 and "files" in found.values["mcp_servers"]
