"""Line repairs beyond one-line statements, through the real run, litellm and the sandbox (scripted model, prompt
mode): a wrong argument on the 3rd line of a call spanning several lines gets a request of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted, snapshot

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_pytest_plugins", "litellm_imported")]
SMALL = {"tool_calling": "prompt", "profile": "small", "max_iterations": 6}
TASK = "The tests in tests/test_labels.py fail since the last change to pkg/labels.py; fix it."
LABELS = '''"""Labels padded to a width."""


def pad(text, width, fill):
    return text.ljust(width, fill)


def label(name, width):
    return pad(
        name,
        width - 1,
        ".",
    )
'''
CALL_LINE = 9  # `return pad(`: the statement's first line, the one spectra know
BUGGY_LINE = 11  # `width - 1,`: the 3rd line of the call
TEST_LABELS = """from pkg.labels import label, pad


def test_pad():
    assert pad("a", 3, "-") == "a--"


def test_label():
    assert label("ab", 5) == "ab..."
"""


@pytest.fixture
def labels_project(tmp_path: Path) -> Path:
    """A package whose multi-line call passes a wrong argument on its 3rd line."""
    root = tmp_path / "labels"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "labels.py").write_text(LABELS)
    (root / "tests" / "test_labels.py").write_text(TEST_LABELS)
    return root


async def test_a_wrong_argument_on_the_third_line_of_a_call_is_asked_about_and_fixed(
    labels_project: Path,
) -> None:
    before = snapshot(labels_project)
    unsure = {"content": "I am not sure."}
    script = [unsure, unsure, {"content": "1. `width + 1,`\n2. `width,`"}]
    out = await run_scripted(labels_project, script, TASK, permission=asker("allow_once"), **SMALL)
    asked = [request["messages"][-1]["content"] for request in out.requests]
    wrong = [a.split("is likely wrong: ")[1].split("`.")[0] for a in asked]
    # the call's first line, then each physical line of the call, the 3rd one with the wrong argument
    assert wrong == ["`return pad(", "`name,", "`width - 1,"]
    assert (
        f"Line {BUGGY_LINE} is likely wrong" in asked[2] and f"{BUGGY_LINE}:         width - 1," in asked[2]
    )
    edits = [r for r in out.of("tool_result") if r["id"].startswith("line-repair-")]
    assert [e["ok"] for e in edits] == [False, True]  # `width + 1,` fails, `width,` passes
    result = out.result
    assert result.success and result.status == "success" and result.iterations == 3
    assert result.proposal.changes[0].new_text == LABELS.replace("width - 1,", "width,")
    assert result.answer.startswith(f"pkg/labels.py line {BUGGY_LINE}: `width - 1,` is now `width,`.")
    assert snapshot(labels_project) == before  # a proposal only


def project(root: Path, source: str, tests: str) -> Path:
    """pkg/items.py and tests/test_items.py."""
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "items.py").write_text(source)
    (root / "tests" / "test_items.py").write_text(tests)
    return root


ITEMS_TASK = "The tests in tests/test_items.py fail since the last change to pkg/items.py; fix it."
TOTAL = """def total(values):
    result = 0
    for v in values:
        result += v


def count(values):
    return len(values)
"""  # `return result` is missing
TEST_TOTAL = """from pkg.items import count, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_count():
    assert count([1, 2]) == 2
"""


async def test_a_missing_return_is_inserted_first_where_the_function_falls_off_its_end(
    tmp_path: Path,
) -> None:
    # the test got a None where it wanted a value: the line after total()'s loop is asked about before any line
    root = project(tmp_path / "items", TOTAL, TEST_TOTAL)
    script = [{"content": "    return result\n\n"}]
    out = await run_scripted(
        root,
        script,
        ITEMS_TASK,
        permission=asker("allow_once"),
        infill_template="qwen",
        **{**SMALL, "max_iterations": 8},
    )
    prompts = [request["prompt"] for request in out.requests]
    assert len(prompts) == 1  # a line inserted, no line filled in
    head, tail = TOTAL.split("\n\n\ndef count")
    assert prompts[0] == f"<|fim_prefix|>{head}\n<|fim_suffix|>\n\n\ndef count{tail.rstrip()}\n<|fim_middle|>"
    result = out.result
    assert result.success and result.status == "success" and result.iterations == 1
    fixed = TOTAL.replace("        result += v\n", "        result += v\n    return result\n")
    assert result.proposal.changes[0].new_text == fixed
    assert result.answer.startswith(
        "pkg/items.py after line 4 (`result += v`), a line is added: `return result`."
    )


EVENS = """def first_even(items):
    for item in items:
        if isinstance(item, int) and item % 2 == 0:
            return item
    return None
"""  # `and item > 0` was dropped from the condition
TEST_EVENS = """from pkg.items import first_even


def test_skips_negative_numbers():
    assert first_even([-2, 3, 4]) == 4


def test_first():
    assert first_even([1, 2]) == 2
"""


async def test_a_part_dropped_from_a_condition_is_filled_in_at_its_end(tmp_path: Path) -> None:
    root = project(tmp_path / "evens", EVENS, TEST_EVENS)
    lines = EVENS.splitlines()
    same = [{"content": lines[n] + "\n\n"} for n in (1, 2, 3)]  # the lines filled in as they are: no version
    script = [*same, {"content": "item > 0:\n            return item\n\n"}]
    out = await run_scripted(
        root,
        script,
        ITEMS_TASK,
        permission=asker("allow_once"),
        infill_template="qwen",
        **{**SMALL, "max_iterations": 8},
    )
    prompts = [request["prompt"] for request in out.requests]
    assert len(prompts) == 4
    assert (
        "        if isinstance(item, int) and item % 2 == 0 and <|fim_suffix|>:\n            return item"
        in prompts[3]
    )
    result = out.result
    assert result.success and result.iterations == 4
    extended = "        if isinstance(item, int) and item % 2 == 0 and item > 0:"
    assert result.proposal.changes[0].new_text == EVENS.replace(lines[2], extended)
    assert result.answer.startswith(f"pkg/items.py line 3: `{lines[2].strip()}` is now `{extended.strip()}`.")
