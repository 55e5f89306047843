"""Infilled line repairs, the text side: the fill-in-the-middle prompt that leaves one line out, and the line the
model writes in its place (read like a version of a line request: agent/repair/line_candidates.py).

A code model trained to fill in the middle writes the line its surroundings make most likely, which for a line a
mistake changed is often the line as it was (the idea of AlphaRepair, Xia and Zhang 2022: a masked line's most
natural completion). The model never sees the suspicious line, so it cannot copy it back the way a request to
correct it invites.
"""

from __future__ import annotations

import re

from lsp_agent.agent.model.text_client import sends_prompt_as_written
from lsp_agent.agent.repair.line_candidates import without_comment
from lsp_agent.settings_values import INFILL_PRESETS

LINES_BEFORE, LINES_AFTER = 60, 20  # the code around the hole (30 and 10 lost the fix in boltons-01)
STOP = ["\n\n"]  # one statement is enough: the first line is the version
MAX_TOKENS = 60
# `auto`: code models trained to fill in the middle, by a part of their name, and the preset with their tokens
MODEL_PRESETS = (
    (re.compile(r"qwen[\w.-]*coder|codegemma", re.I), "qwen"),
    (re.compile(r"starcoder", re.I), "starcoder"),
    (re.compile(r"deepseek[\w.-]*coder", re.I), "deepseek"),
    (re.compile(r"code-?llama", re.I), "codellama"),
)


def template_for(setting: str | None, model: str) -> str | None:
    """The infill template a run uses: the setting, or for `auto` the preset the model's name calls for (none for
    other models, or behind a provider that does not send the prompt as written)."""
    if setting != "auto":
        return setting or None  # "" is off too
    if not sends_prompt_as_written(model):
        return None
    return next((preset for pattern, preset in MODEL_PRESETS if pattern.search(model)), None)


def infill_prompt(template: str, lines: list[str], number: int) -> str:
    """The template (or the preset so named) filled with the code before and after line `number` (1-based), which
    is left out."""
    template = INFILL_PRESETS.get(template, template)
    prefix = "".join(f"{line}\n" for line in lines[max(0, number - 1 - LINES_BEFORE) : number - 1])
    suffix = "".join(f"\n{line}" for line in lines[number : number + LINES_AFTER])
    parts = {"prefix": prefix, "suffix": suffix + "\n"}
    return re.sub(r"\{(prefix|suffix)\}", lambda hole: parts[hole.group(1)], template)  # code's braces stay


def filled_line(text: str) -> str:
    """The first line of code the model filled in (comments and blank lines skipped), or ''."""
    for line in text.splitlines():
        if code := without_comment(line.strip()):
            return code
    return ""
