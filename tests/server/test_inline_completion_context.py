"""The repository context of inline completions through the real protocol (pytest-lsp against the scripted model's
/v1/completions): the open file's own outline beyond the window, read from the buffer and never from the disk's
copy, and an order of the context that keeps the prompt's start byte-identical across keystrokes and edits."""

from __future__ import annotations

import pytest
import pytest_asyncio
from server_editor import start_editor, stop_editor, write_tree
from test_inline_completion import SETTINGS, complete, replace_line, set_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILLER = (
    "    def audit(self) -> int:\n"
    + "".join(f"        step_{i} = {i}\n" for i in range(150))
    + "        return 0\n\n"
)
LEDGER_TOP = '''"""Ledger."""
import decimal
from collections import (
    OrderedDict,  # kept in order
    defaultdict,
)


class Ledger:
    """Accounts."""

    currency: str
    _balance_cents: int

    def deposit(self, cents: int) -> None:
        self._balance_cents += cents

'''
LEDGER_END = "    def report(self) -> str:\n        total = {hole}\n        return str(total)\n"
ON_DISK = "self._balance_cents  # the answer as the disk has it"
ALPHA = 'def alpha_fn(x: int) -> int:\n    """Alpha."""\n    return x\n'
ZETA = 'def zeta_fn(y: int) -> int:\n    """Zeta."""\n    return y\n'


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    files = {
        "ledger.py": LEDGER_TOP + FILLER + LEDGER_END.format(hole=ON_DISK),
        "alpha.py": ALPHA,
        "zeta.py": ZETA,
        "main.py": "\n",
    }
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop", files)
    settings = {**SETTINGS, "apiBase": model.base_url}
    ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    await ed.wait_index_ready()
    yield ed
    await stop_editor(ed)


async def prompt_of(editor, model, uri: str, line: int, character: int) -> str:
    model.add_steps([{"content": "0"}])
    before = len(model.requests)
    assert await complete(editor, uri, line, character) == ["0"]
    return model.requests[before]["prompt"]


async def test_the_open_files_definitions_beyond_the_window_come_from_the_buffer_not_the_disk(editor, model):
    uri = editor.uri("ledger.py")
    text = LEDGER_TOP + FILLER + LEDGER_END.format(hole="")
    set_text(editor, uri, text)
    line = text.split("\n").index("        total = ")
    prompt = await prompt_of(editor, model, uri, line, len("        total = "))
    assert line > 150 and prompt.count("<|file_sep|>ledger.py") == 1
    own = prompt.split("<|file_sep|>ledger.py\n<|fim_prefix|>", 1)[1]
    assert own.split("\n\n", 1)[0] == "import decimal\nfrom collections import (OrderedDict, defaultdict)"
    assert "    _balance_cents: int\n" in own and "    currency: str\n" in own
    assert "    def deposit(self, cents: int) -> None: ...\n" in own
    assert "the answer as the disk has it" not in prompt  # the index's and the disk's copy never speak
    assert prompt.endswith("        total = <|fim_suffix|>\n        return str(total)\n<|fim_middle|>")


async def test_the_context_keeps_its_order_when_the_names_near_the_cursor_change_rank(editor, model):
    uri = editor.uri("main.py")
    body = ["def run(a, b):"] + [f"    step_{i} = {i}" for i in range(8)]
    first = [*body, "    x = zeta_fn(alpha_fn(a))", "    y = ", ""]
    set_text(editor, uri, "\n".join(first))
    one = await prompt_of(editor, model, uri, 10, len("    y = "))
    assert "<|file_sep|>alpha.py\n" in one and "<|file_sep|>zeta.py\n" in one
    second = [*body, "    x = zeta_fn(alpha_fn(a))", *[f"    pad_{i} = {i}" for i in range(8)]]
    second += ["    y = alpha_fn(zeta_fn(b))", "    z = ", ""]
    set_text(editor, uri, "\n".join(second))
    two = await prompt_of(editor, model, uri, 19, len("    z = "))  # another band, the names in reverse
    context = one.split("<|file_sep|>main.py", 1)[0]
    assert two.split("<|file_sep|>main.py", 1)[0] == context
    assert context.index("<|file_sep|>alpha.py") < context.index("<|file_sep|>zeta.py")


async def test_the_prompt_start_stays_byte_identical_while_the_cursor_moves_in_its_band(editor, model):
    uri = editor.uri("main.py")
    lines = [
        "def run(a, b):",
        "    x = zeta_fn(alpha_fn(a))",
        *[f"    s_{i} = {i}" for i in range(4)],
        "    ",
    ]
    set_text(editor, uri, "\n".join(lines))
    here = await prompt_of(editor, model, uri, 6, 4)
    there = await prompt_of(editor, model, uri, 5, len("    s_3 = "))  # up a line, same band of 8
    common = here.split("    s_3 = 3", 1)[0]
    assert there.startswith(common) and "<|file_sep|>zeta.py" in common


async def test_the_head_of_the_prompt_is_the_same_for_the_whole_file_while_its_imports_stay(editor, model):
    uri = editor.uri("main.py")
    lines = [
        "from alpha import alpha_fn",
        "from zeta import zeta_fn",
        "",
        "def run(a, b):",
        "    x = alpha_fn(a)",
    ]
    lines += [*[f"    ledger_{i} = Ledger()" for i in range(16)], "    y = zeta_fn(b)", "    "]
    set_text(editor, uri, "\n".join(lines))
    near_top = await prompt_of(editor, model, uri, 5, len("    ledger_0 = "))
    far_down = await prompt_of(editor, model, uri, 22, 4)  # two bands further, other names near the cursor
    head = (
        f"<|repo_name|>shop\n<|file_sep|>alpha.py\n{ALPHA.rstrip()}\n<|file_sep|>zeta.py\n{ZETA.rstrip()}\n"
    )
    assert near_top.startswith(head) and far_down.startswith(head)
    assert "class Ledger:" in far_down  # the per-band context (a near name's definition) comes after the head
    assert (
        near_top[len(head) :].split("<|file_sep|>main.py")[0]
        != far_down[len(head) :].split("<|file_sep|>main.py")[0]
    )


async def test_an_edit_of_one_context_file_leaves_the_prompt_before_it_as_it_was(editor, model):
    uri = editor.uri("main.py")
    lines = ["def run(a, b):", "    x = zeta_fn(alpha_fn(a))", "    "]
    set_text(editor, uri, "\n".join(lines))
    before = await prompt_of(editor, model, uri, 2, 4)
    zeta = editor.open("zeta.py")
    replace_line(editor, zeta, 1, '    """Zeta, edited."""\n', ZETA.replace("Zeta.", "Zeta, edited."))
    set_text(editor, uri, "\n".join([*lines[:2], "    r"]))  # a keystroke: not the cached suggestion
    after = await prompt_of(editor, model, uri, 2, 5)
    assert "Zeta, edited." in after and "Zeta, edited." not in before
    unchanged = before.split("<|file_sep|>zeta.py", 1)[0]
    assert "<|file_sep|>alpha.py" in unchanged and after.startswith(unchanged)
