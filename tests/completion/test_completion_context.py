"""The open file's outline beyond the prompt's window, and the order of the context in the prompt."""

from __future__ import annotations

from lsp_agent.completion.context import prompt_order
from lsp_agent.completion.own_file import own_outline
from lsp_agent.completion.prompt import Snippet, build_prompt, file_window

SOURCE = [
    "import os",
    "from typing import (",
    "    Any,  # everything",
    "    Iterator,",
    ")",
    "LIMIT = 3",
    "TABLE = [",
    "    1,",
    "]",
    "",
    "def helper(x: int) -> int:",
    "    return x",
    "",
    "class Box:",
    "    size: int",
    "",
    "    def grow(",
    "        self, by: int",
    "    ) -> None:",
    "        self.size += by",
    "",
    "    def shrink(self) -> None:",
    "        self.size -= 1",
    "",
    "    def show(self) -> str:",
    "        return str(self.size)",
]


def test_the_outline_holds_imports_fields_and_headers_outside_the_window_only():
    snippets = own_outline("box.py", SOURCE, 22, (20, 26))  # the window shows shrink and show
    texts = [s.text for s in snippets]
    assert texts[0] == "import os\nfrom typing import (Any, Iterator)"
    assert texts[1] == "    size: int"  # the enclosing class's fields before its methods
    assert "    def grow(\n        self, by: int\n    ) -> None: ..." in texts
    assert "def helper(x: int) -> int: ..." in texts and "LIMIT = 3" in texts
    assert "TABLE = [" not in texts  # a statement cut at its first line is no definition
    assert not any("shrink" in t or "show" in t for t in texts)  # the window shows them already
    assert all(s.path == "box.py" and s.kind == "own" for s in snippets)


def test_a_window_that_shows_the_whole_file_leaves_no_outline():
    assert own_outline("box.py", SOURCE, 22, (0, 40)) == []


def test_the_order_is_by_group_then_path_and_line_never_by_rank():
    ranked = [
        Snippet("z.py", "def z(): ...", "definition", (5, 5)),
        Snippet("a.py", "def a(): ...", "similar", (1, 9)),
        Snippet("m.py", "import os", "own", (1, 1)),
        Snippet("b.py", "def b(): ...", "definition", (2, 2)),
        Snippet("y.py", "class Y: ...", "imported", (1, 1)),
        Snippet("c.py", "x = 1", "edit", (0, 0)),
    ]
    order = [s.path for s in prompt_order(ranked)]
    assert order == ["y.py", "b.py", "z.py", "a.py", "c.py", "m.py"]
    assert prompt_order(list(reversed(ranked))) == prompt_order(ranked)


def test_the_outline_goes_before_the_prefix_in_every_prompt_form():
    window = file_window("m.py", "python", ["x = os."], 0, len("x = os."))
    snippets = [Snippet("m.py", "import os", "own", (1, 1)), Snippet("a.py", "A = 1", "definition", (1, 1))]
    qwen, _ = build_prompt("qwen", "openai/qwen2.5-coder-1.5b", "r", snippets, window)
    assert qwen.endswith(
        "<|file_sep|>a.py\nA = 1\n<|file_sep|>m.py\n<|fim_prefix|>import os\n\nx = os.<|fim_suffix|><|fim_middle|>"
    )
    server, suffix = build_prompt("server", "openai/qwen2.5-coder:1.5b", "r", snippets, window)
    assert server == "# a.py\n# A = 1\n#\nimport os\n\nx = os." and suffix == ""
