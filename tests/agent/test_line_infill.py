"""Infilled line repairs, the text side: the prompt that leaves one line out, the line read back, the setting."""

from __future__ import annotations

import pytest

from lsp_agent.agent.repair.line_infill import (
    LINES_AFTER,
    LINES_BEFORE,
    filled_line,
    infill_prompt,
    template_for,
)
from lsp_agent.settings_values import INFILL_PRESETS, infill_template

LINES = [
    "def f(d):",
    '    """Braces {prefix} and {suffix} in code stay."""',
    "    x = d['a']",
    "    return x",
]


def test_a_preset_leaves_the_line_out_and_keeps_the_code_as_it_is() -> None:
    prompt = infill_prompt("qwen", LINES, 3)
    assert prompt == (
        f"<|fim_prefix|>{LINES[0]}\n{LINES[1]}\n<|fim_suffix|>\n{LINES[3]}\n<|fim_middle|>"
    )  # the placeholders in the code are not filled in again
    assert (
        infill_prompt("{suffix}|{prefix}", LINES, 1) == f"\n{LINES[1]}\n{LINES[2]}\n{LINES[3]}\n|"
    )  # a custom order


def test_the_code_around_the_hole_is_bounded() -> None:
    lines = [f"x{n} = {n}" for n in range(1, 201)]
    prompt = infill_prompt("codellama", lines, 100)
    assert prompt.startswith(f"<PRE> x{100 - LINES_BEFORE} = ") and f"x{99 - LINES_BEFORE} =" not in prompt
    assert f"x{100 + LINES_AFTER} = " in prompt and f"x{101 + LINES_AFTER} =" not in prompt
    assert "x100 = 100" not in prompt


def test_the_filled_in_line_is_the_first_line_of_code() -> None:
    assert filled_line(
        "\n    # the limit\n    if floor is not None and value < floor:  # low\n        value = floor"
    ) == ("if floor is not None and value < floor:")
    assert filled_line("   \n# nothing but a comment\n") == ""


def test_the_setting_takes_a_preset_name_or_a_template_with_both_holes() -> None:
    assert (
        infill_template(" qwen ") == "qwen" and infill_template("") is None and infill_template(None) is None
    )
    assert infill_template("<A>{prefix}<B>{suffix}<C>") == "<A>{prefix}<B>{suffix}<C>"
    assert (
        set(INFILL_PRESETS) == {"qwen", "starcoder", "deepseek", "codellama"}
        and infill_template("auto") == "auto"
    )
    for bad in ("llama", "<A>{prefix}<C>", 3):
        with pytest.raises(ValueError, match="qwen, starcoder, deepseek, codellama|expected auto, a preset"):
            infill_template(bad)


@pytest.mark.parametrize(
    ("model", "template"),
    [
        ("openai/qwen2.5-coder-1.5b-instruct", "qwen"),
        ("hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct", "qwen"),
        ("llamafile/codegemma-7b", "qwen"),
        ("openai/starcoder2-3b", "starcoder"),
        ("text-completion-openai/deepseek-coder-6.7b-base", "deepseek"),
        ("openai/CodeLlama-7b", "codellama"),
        ("openai/local", None),  # a served alias says nothing: set the preset
        ("openai/gpt-4o-mini", None),
        ("ollama/qwen2.5-coder:1.5b", None),  # ollama and LM Studio wrap a text prompt in a chat
        ("lm_studio/qwen2.5-coder-7b-instruct", None),
        ("anthropic/claude-sonnet-4", None),
    ],
)
def test_auto_picks_the_preset_a_code_model_behind_an_openai_compatible_server_calls_for(
    model: str, template: str | None
) -> None:
    assert template_for("auto", model) == template
    assert template_for("starcoder", model) == "starcoder"
    assert template_for(None, model) is None and template_for("", model) is None
