"""Completion prompts: repository context first (stable while typing), the open file's prefix and suffix last.

A llama.cpp-style server keeps the KV cache of the last prompt (`cache_prompt`) and evaluates only what differs
from it, so the part that changes with each keystroke (the end of the prefix, the suffix) comes last. With
Qwen2.5-Coder's template the context uses its repository format (`<|repo_name|>`, one `<|file_sep|>` per file);
with other templates, and for servers that build the prompt themselves, it becomes comments before the prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsp_agent.agent.repair.line_infill import MODEL_PRESETS
from lsp_agent.settings_values import INFILL_PRESETS

# sized for a model on a laptop CPU (docs/completions.md, "How big a prompt is"): the suffix is evaluated again
# at every keystroke, the prefix window whenever it moves
PREFIX_LINES, SUFFIX_LINES = 96, 16
WINDOW_STEP = 32  # the prefix starts on a multiple of this line, so it stays put while the cursor moves
PREFIX_CHARS, SUFFIX_CHARS = 6_000, 1_000
COMMENT = {"python": "#", "ruby": "#", "bash": "#", "lua": "--", "sql": "--", "haskell": "--"}
STOPS = {  # the end-of-text tokens of each preset, so a model that starts another file stops
    "qwen": ["<|endoftext|>", "<|file_sep|>", "<|fim_pad|>", "<|repo_name|>"],
    "starcoder": ["<|endoftext|>", "<file_sep>", "<fim_prefix>"],
    "deepseek": ["<｜end▁of▁sentence｜>", "<|EOT|>"],
    "codellama": ["<EOT>", "</s>"],
}
CHAT_SYSTEM = (
    "You complete code. Reply with only the code that belongs at <CURSOR>: no explanation, no code fence, "
    "nothing of the code before or after it."
)


@dataclass(frozen=True)
class Snippet:
    """A piece of another file (or a distant part of this one) that the prompt shows the model."""

    path: str
    text: str
    kind: str  # "imported" | "definition" | "similar" | "edit" | "own" (the open file beyond the window)
    lines: tuple[int, int] = (0, 0)  # first and last line (1-based) of the file it shows, when known


@dataclass
class FileWindow:
    """The open file around the cursor as the prompt shows it."""

    path: str
    language: str | None
    prefix: str
    suffix: str


def window_lines(line: int) -> tuple[int, int]:
    """The first and last line (0-based) of the open file the prompt's window shows for a cursor's line."""
    start = max(0, line - PREFIX_LINES)
    return start - start % WINDOW_STEP, line + SUFFIX_LINES


def file_window(path: str, language: str | None, lines: list[str], line: int, character: int) -> FileWindow:
    """The lines before the cursor (from a window start that moves in steps) and a few after it."""
    start = window_lines(line)[0]
    current = lines[line] if line < len(lines) else ""
    prefix = "".join(f"{text}\n" for text in lines[start:line]) + current[:character]
    suffix = current[character:] + "".join(f"\n{text}" for text in lines[line + 1 : line + 1 + SUFFIX_LINES])
    if len(prefix) > PREFIX_CHARS:  # very long lines: keep whole lines from the end
        cut = prefix.find("\n", len(prefix) - PREFIX_CHARS)
        prefix = prefix[cut + 1 :] if cut >= 0 else prefix[-PREFIX_CHARS:]
    return FileWindow(path, language, prefix, suffix[:SUFFIX_CHARS])


def preset_of(template: str) -> str | None:
    """The preset's name of a template (given by name or spelled out), None for a custom one."""
    if template in INFILL_PRESETS:
        return template
    return next((name for name, text in INFILL_PRESETS.items() if text == template), None)


def uses_repo_format(template: str, model: str) -> bool:
    """Whether the model reads Qwen2.5-Coder's repository format (CodeGemma shares its FIM tokens, not this)."""
    return preset_of(template) == "qwen" and not re.search(r"codegemma", model, re.I)


def stops_for(template: str, multiline: bool) -> list[str]:
    """Stop sequences of a request: the preset's end tokens, and the line end for a one-line suggestion."""
    stops = list(STOPS.get(preset_of(template) or "", []))
    return (["\n"] if not multiline else ["\n\n\n"]) + stops[:3]


def repo_format(repo: str, snippets: list[Snippet], window: FileWindow) -> str:
    """Qwen2.5-Coder's repository-level FIM prompt: the other files, then this one with its hole."""
    others, own = split_own(snippets, window.path)
    parts = [f"<|repo_name|>{repo}\n"]
    parts += [f"<|file_sep|>{path}\n{text}\n" for path, text in by_file(others)]
    parts.append(f"<|file_sep|>{window.path}\n")
    parts.append(f"<|fim_prefix|>{own}{window.prefix}<|fim_suffix|>{window.suffix}<|fim_middle|>")
    return "".join(parts)


def split_own(snippets: list[Snippet], path: str) -> tuple[list[Snippet], str]:
    """(the other files' snippets, the open file's outline beyond the window as the text before its prefix)."""
    own = [s.text for s in snippets if s.path == path and s.kind == "own"]
    others = [s for s in snippets if not (s.path == path and s.kind == "own")]
    return others, "".join(f"{text}\n\n" for text in own)


def by_file(snippets: list[Snippet]) -> list[tuple[str, str]]:
    """The snippets merged per file (its pieces in line order, `...` between them); a file appears once, or twice
    when the prompt's head (the definitions of the file's imports, "imported") has some of it: the head does not
    change with the cursor, so nothing per keystroke is merged into it."""
    files: dict[tuple[str, bool], list[Snippet]] = {}
    for snippet in snippets:
        files.setdefault((snippet.path, snippet.kind == "imported"), []).append(snippet)
    return [
        (path, "\n...\n".join(s.text.rstrip() for s in sorted(group, key=lambda s: s.lines)))
        for (path, _), group in files.items()
    ]


def context_comment(snippets: list[Snippet], language: str | None) -> str:
    """The snippets as comments in the file's language, to put before the prefix."""
    mark = COMMENT.get(language or "", "//")
    out: list[str] = []
    for path, text in by_file(snippets):
        out.append(f"{mark} {path}\n")
        out += [f"{mark} {line}".rstrip() + "\n" for line in text.splitlines()]
    return "".join(out) + (f"{mark}\n" if out else "")


def fill_template(template: str, prefix: str, suffix: str) -> str:
    """The template (or the preset so named) with the prefix and suffix filled in (code's braces stay)."""
    text = INFILL_PRESETS.get(template, template)
    parts = {"prefix": prefix, "suffix": suffix}
    return re.sub(r"\{(prefix|suffix)\}", lambda hole: parts[hole.group(1)], text)


def build_prompt(
    template: str, model: str, repo: str, snippets: list[Snippet], window: FileWindow
) -> tuple[str, str | None]:
    """(prompt, suffix to send apart or None) for a template, `server` (the server formats) or `chat`."""
    if uses_repo_format(template, model):
        return repo_format(repo, snippets, window), None
    others, own = split_own(snippets, window.path)
    prefix = context_comment(others, window.language) + own + window.prefix
    if template == "server":
        return prefix, window.suffix
    return fill_template(template, prefix, window.suffix), None


def chat_messages(repo: str, snippets: list[Snippet], window: FileWindow) -> list[dict[str, str]]:
    """The chat fallback's request: the context, then the file with a <CURSOR> mark."""
    others, own = split_own(snippets, window.path)
    context = "".join(f"{path}:\n```\n{text}\n```\n" for path, text in by_file(others))
    task = f"{window.path} in {repo}:\n```\n{own}{window.prefix}<CURSOR>{window.suffix}\n```"
    user = (f"Related code:\n{context}\n" if context else "") + task
    return [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": user}]


def default_template(model: str) -> str | None:
    """The preset a model's name calls for (the same table line repairs use)."""
    return next((preset for pattern, preset in MODEL_PRESETS if pattern.search(model)), None)
