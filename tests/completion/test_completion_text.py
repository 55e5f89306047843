"""The text side of inline completion: block ends, suffix overlap, the cache, strings and comments, prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.completion.cache import SuggestionCache
from lsp_agent.completion.context import imported_names, names_near, signature_and_doc
from lsp_agent.completion.postprocess import Cursor, block_end, finish
from lsp_agent.completion.prompt import Snippet, build_prompt, file_window, stops_for
from lsp_agent.completion.recent_edits import RecentEdits
from lsp_agent.completion.syntax import in_string_or_comment


@pytest.mark.parametrize(
    ("before", "after", "reply", "shown"),
    [
        (
            "    ",
            "",
            "if x:\n        a()\n    else:\n        b()\n    foo()",
            "if x:\n        a()\n    else:\n        b()",
        ),
        ("def f():", "", "\n    return 1\n\n\nclass B:\n    pass", "\n    return 1"),
        ("function f() ", "", "{\n  return 1;\n}\nfunction g() {}", "{\n  return 1;\n}"),
        ("    ", "", "total = 0\n    for x in xs:\n        total += x\n    return total\ndef g():", None),
        ("print(", ")", "foo()", "foo()"),  # the model's `)` closes foo(: kept
        ("print(", ")", "foo())", "foo()"),  # one `)` too many: the line's own is not repeated
        ('print("', '")', 'hello")', "hello"),
        ("if ", ":", "ready:", "ready"),
        ("x = ", "", "compute(a)\nmore", "compute(a)\nmore"),
        ("x = ", " + 1", "y\nz", "y"),  # mid-line: one line only
        ("    ", "", "<|file_sep|>other.py", ""),
    ],
)
def test_finish_shapes_the_models_text(before, after, reply, shown):
    cursor = Cursor(before, after)
    expected = reply.rsplit("\ndef g():", 1)[0] if shown is None else shown
    assert finish(reply, cursor) == expected


def test_the_block_end_is_known_while_the_reply_streams():
    cursor = Cursor("    ", "")
    assert block_end("x = 1\n    y = 2", cursor) is None
    assert block_end("x = 1\n    y = 2\nd", cursor) == len("x = 1\n    y = 2")


def test_a_cut_reply_keeps_whole_lines_and_a_repeat_of_the_next_line_is_dropped():
    cursor = Cursor("    ", "", ("    return result",))
    assert finish("result = 1\n    resu", cursor, cut_short=True) == "result = 1"
    assert finish("result = 1\n    return result\n", cursor) == "result = 1"
    assert finish("return result", cursor) == ""


def test_the_cache_answers_the_rest_of_a_suggestion_typed_into():
    cache = SuggestionCache()
    cache.put("a.py", "def f(a, b):\n    return ", "\n", "a + b")
    assert cache.lookup("a.py", "def f(a, b):\n    return a ", "\n") == "+ b"
    assert cache.lookup("a.py", "def f(a, b):\n    return a - ", "\n") is None  # typed something else
    assert cache.lookup("a.py", "def f(a, b):\n    return a + b", "\n") is None  # nothing left
    assert cache.lookup("b.py", "def f(a, b):\n    return a ", "\n") is None
    cache.put("a.py", "print(", ")", "foo(1)")
    assert cache.lookup("a.py", "print(foo(", "))") == "1)"  # an auto-closed bracket after the cursor


@pytest.mark.parametrize(
    ("text", "marker", "inside"),
    [
        ('x = "hello |"\n', "|", True),
        ('x = "hello"|\n', "|", False),
        ("# a comment |\n", "|", True),
        ('def f():\n    """Doc |\n    more."""\n', "|", True),
        ('y = f"{val|}"\n', "|", False),
        ("call(|)\n", "|", False),
    ],
)
def test_strings_and_comments_are_told_apart_from_code(text, marker, inside):
    offset = text.index(marker)
    assert in_string_or_comment("python", text.replace(marker, ""), offset) is inside


def test_the_names_near_the_cursor_and_the_imports_are_looked_up():
    lines = [
        "from geometry import area_of, Shape as S",
        "import os.path",
        "",
        "def f(box):",
        "    size = measure(",
    ]
    found = names_near(lines, 4, lines[4])
    names = [name for name, _ in found]
    assert names[:2] == ["measure", "size"] and "box" in names
    assert {"area_of", "Shape", "path"} <= set(names)
    far = [lines[0], *[f"step_{i} = {i}" for i in range(20)], "size = measure("]
    assert ("area_of", True) in names_near(far, 21, far[21])  # imported, not used near the cursor
    js = "import { useState, useEffect as e } from 'react'\nimport React from 'react'"
    assert set(imported_names(js)) == {"React", "useState", "useEffect"}


def test_a_definition_is_shown_by_its_signature_and_docstring():
    source = [
        "def area_of(shape, unit='m'):",
        '    """The area.',
        "",
        '    In square units."""',
        "    width = shape.width",
        "    height = shape.height",
        "    return width * height",
    ]
    assert signature_and_doc(source, 0, 6) == "\n".join(source[:4] + ["    ..."])


def test_the_qwen_prompt_puts_the_repository_first_and_the_cursor_last():
    window = file_window("main.py", "python", ["import a", "x = a.f(", "y = 2"], 1, len("x = a.f("))
    snippets = [Snippet("a.py", "def f(n): ...", "definition", (1, 1))]
    prompt, suffix = build_prompt("qwen", "openai/qwen2.5-coder-1.5b", "repo", snippets, window)
    assert suffix is None
    assert prompt == (
        "<|repo_name|>repo\n<|file_sep|>a.py\ndef f(n): ...\n<|file_sep|>main.py\n"
        "<|fim_prefix|>import a\nx = a.f(<|fim_suffix|>\ny = 2<|fim_middle|>"
    )
    prompt, _ = build_prompt("starcoder", "openai/starcoder2", "repo", snippets, window)
    assert prompt.startswith("<fim_prefix># a.py\n# def f(n): ...\n#\nimport a\n")
    prompt, suffix = build_prompt("server", "openai/qwen2.5-coder:1.5b", "repo", snippets, window)
    assert prompt.endswith("x = a.f(") and suffix == "\ny = 2"
    assert stops_for("qwen", multiline=False)[0] == "\n"


def test_the_prefix_window_starts_on_a_fixed_step_while_the_cursor_moves():
    lines = [f"line {i}" for i in range(400)]
    starts = {file_window("f.py", None, lines, n, 0).prefix.split("\n", 1)[0] for n in range(224, 256)}
    assert starts == {"line 128"}


def test_the_window_is_sized_for_a_cpu_served_model():
    lines = [f"line {i}" for i in range(400)]
    window = file_window("f.py", None, lines, 300, 0)
    assert window.prefix.startswith("line 192\n") and window.prefix.endswith("line 299\n")  # 96-127 lines
    after = [f"line {i}" for i in range(301, 317)]  # 16 lines after the cursor
    assert window.suffix.split("\n")[1:] == after


def test_recent_edits_merge_nearby_lines_and_follow_edits_above_them():
    edits = RecentEdits()
    path, other = Path("/w/a.py"), Path("/w/b.py")
    edits.note(path, 50, 50, 0)
    edits.note(path, 52, 52, 0)
    edits.note(other, 3, 3, 0)
    edits.note(path, 10, 10, 2)  # two lines inserted above the first region
    regions = [(r.path, r.first, r.last) for r in edits.regions]
    assert regions == [(path, 10, 12), (other, 3, 3), (path, 52, 54)]
    shown = edits.shown(lambda p: [f"{p.name}:{i}" for i in range(100)], lambda r: r.path == other)
    assert [(p, first) for p, first, _ in shown] == [(path, 7), (path, 49)]


def test_the_pieces_of_one_file_are_shown_together_in_line_order():
    window = file_window("main.py", "python", ["x = 1"], 0, 5)
    snippets = [
        Snippet("lib.py", "def later(): ...", "similar", (40, 40)),
        Snippet("util.py", "def u(): ...", "definition", (3, 3)),
        Snippet("lib.py", "def early(): ...", "definition", (2, 2)),
    ]
    prompt, _ = build_prompt("qwen", "openai/qwen2.5-coder-1.5b", "repo", snippets, window)
    assert "<|file_sep|>lib.py\ndef early(): ...\n...\ndef later(): ...\n<|file_sep|>util.py\n" in prompt


def test_the_incremental_string_check_agrees_with_a_fresh_parse():
    import random

    rng = random.Random(7)
    text = "".join(f"def f{i}(x):\n    '''doc {i}'''\n    return x + {i}  # c\n\n" for i in range(40))
    for _ in range(60):
        at = rng.randrange(len(text))
        text = text[:at] + rng.choice(["'", '"', "#", "x", "\n", "'''", "(", ")"]) + text[at:]
        offset = rng.randrange(len(text) + 1)
        assert in_string_or_comment("python", text, offset, key="doc") == in_string_or_comment(
            "python", text, offset
        )


def test_the_completion_model_and_how_it_is_prompted():
    from lsp_agent.completion.setup import resolve_setup
    from lsp_agent.config import Settings

    local = Settings(model="openai/qwen2.5-coder-7b", api_base="http://127.0.0.1:8012/v1", api_key="k")
    setup = resolve_setup(local)
    assert (setup.model, setup.api_base, setup.api_key, setup.template) == (
        "openai/qwen2.5-coder-7b",
        "http://127.0.0.1:8012/v1",
        "k",
        "qwen",
    )
    hosted = Settings(
        model="anthropic/claude-sonnet-4-5",
        api_key="a",
        completion_model="text-completion-codestral/codestral-latest",
    )
    setup = resolve_setup(hosted)
    assert (setup.api_base, setup.api_key, setup.template) == (None, None, "server")
    only = Settings(completion_model="openai/starcoder2-3b", api_base="http://h/v1")
    assert (resolve_setup(only).api_base, resolve_setup(only).template) == ("http://h/v1", "starcoder")
    chat = resolve_setup(Settings(model="openai/gpt-4o-mini", inline_completion="on"))
    assert chat.template is None and chat.loud and "not known as a fill-in-the-middle model" in chat.reason
    assert (
        resolve_setup(Settings(model="openai/gpt-4o-mini", completion_chat_fallback=True)).template == "chat"
    )
    off = resolve_setup(Settings(model="openai/qwen2.5-coder-7b", inline_completion="off"))
    assert off.template is None and off.reason is None
    ollama = Settings(model="openai/qwen2.5-coder:1.5b", completion_template="server")
    assert resolve_setup(ollama).template == "server"
