"""Sampled line repairs, the text side: versions of a line read back from free-form replies, the lines worth
asking about, the edit that replaces exactly one line, and the order the spectra rank lines in."""

from __future__ import annotations

from lsp_agent.agent.repair.line_candidates import (
    MAX_CANDIDATES,
    candidate_lines,
    condition_header,
    line_request,
    repairable,
)
from lsp_agent.agent.repair.line_repair import unique_edit
from lsp_agent.tools.fault_lines import Spectra, ranked_lines

ORIGINAL = '            hour = Decimal(microsecond["hour"])'


def test_versions_come_from_numbered_lists_inline_code_fences_and_replace_sentences() -> None:
    reply = """Here are 5 different corrected versions of line 134:

1. `hour = Decimal(groups["hour"])`
2) hour = int(groups["hour"])
134:             hour = Decimal(microsecond["hour"])
3. Replace `microsecond["hour"]` with `groups.get("hour", 0)`:
```python
hour = Decimal(microsecond.get("hour", 0))
```
- Use `hour = Decimal(groups["hour"])` as before, since `microsecond` is an int here.
The fix makes sure the hour comes from the regular expression's groups."""
    assert candidate_lines(reply, ORIGINAL) == [
        '            hour = Decimal(groups["hour"])',
        '            hour = int(groups["hour"])',
        '            hour = Decimal(groups.get("hour", 0))',
        '            hour = Decimal(microsecond.get("hour", 0))',
    ]  # indented like the line; the line itself, repeats, prose and bare names left out


def test_a_numbered_listing_gives_its_changed_lines_without_comments_or_the_echoed_context() -> None:
    # Qwen2.5-Coder 1.5B's reply to a request for line 449 (humanize-03), numbered as the code shown was
    reply = """```python
449:         value = float(value)
450:         if not math.isfinite(value):  # Corrected version 1
451:             return _format_not_finite(value)
452:     except (ValueError, TypeError):

# Corrected version 2
449:         value = float(value)
450:         if not math.isinf(value):  # Corrected version 2
```"""
    shown = ["        value = float(value)", "            return _format_not_finite(value)"]
    assert candidate_lines(reply, "        if math.isfinite(value):", shown) == [
        "        if not math.isfinite(value):",
        "        if not math.isinf(value):",
    ]
    assert candidate_lines("1. x = f(y)  # was: x = g(y)", "    x = g(y)") == ["    x = f(y)"]
    assert candidate_lines("1. `s = '#' + t`", "    s = t") == ["    s = '#' + t"]  # a # in a string stays


def test_at_most_max_candidates_are_kept_and_an_empty_reply_gives_none() -> None:
    reply = "\n".join(f"{n}. `return x + {n}`" for n in range(1, 12))
    assert len(candidate_lines(reply, "    return x")) == MAX_CANDIDATES
    assert candidate_lines("", "    return x") == []
    assert candidate_lines("I cannot help with that.", "    return x") == []


def test_only_statements_are_worth_asking_about() -> None:
    for line in ("    if x > hi:", "        return lo", "    total += n", "    x = f(y)"):
        assert repairable(line), line
    for line in (
        "",
        "   ",
        "def f(x):",
        "    async def g():",
        "class A:",
        "    @property",
        "import os",
        "from a import b",
        "    try:",
        "    else:",
        "    finally:",
        "    # note",
        '    """Doc."""',
    ):
        assert not repairable(line), line


def test_a_line_in_an_if_or_while_block_has_that_condition_as_its_header() -> None:
    lines = [
        "def f(xs, step):",  # 1
        "    if step is not None:",  # 2
        "        # negative steps",  # 3
        "",  # 4
        "        step = -step",  # 5
        "        while (step and",  # 6
        "               xs):",  # 7
        "            xs.pop()",  # 8
        "    else:",  # 9
        "        step = 1",  # 10
        "    return xs",  # 11
    ]
    assert condition_header(lines, 5) == 2  # past a comment and a blank line
    assert condition_header(lines, 8) == 6  # a condition written on two lines
    assert condition_header(lines, 7) == 6  # a continuation line
    assert condition_header(lines, 10) is None  # an else block
    assert condition_header(lines, 11) is None  # a function's body
    assert condition_header(lines, 2) is None
    assert condition_header(lines, 0) is None and condition_header(lines, 12) is None


def test_the_request_shows_the_failure_and_the_numbered_code_around_the_line() -> None:
    lines = [f"line{n}" for n in range(1, 31)]
    text = line_request("Fix it.", "E   assert 1 == 2\n" * 30, "pkg/a.py", lines, 20)
    assert text.startswith("Fix it.\n\nThe failing test:\nE   assert 1 == 2")
    assert text.count("assert 1 == 2") == 14  # the failure is cut
    assert (
        "12: line12" in text
        and "24: line24" in text
        and "11: line11" not in text
        and "25: line25" not in text
    )
    assert text.endswith(
        "Line 20 is likely wrong: `line20`. Write 5 different corrected versions of line 20, "
        "numbered 1-5, each one full line of code, no explanations."
    )


def test_the_edit_takes_as_many_neighbours_as_make_its_text_unique() -> None:
    lines = [
        "def f(x):",
        "    if x:",
        "        return 1",
        "    if not x:",
        "        return 1",
        "    return 0",
    ]
    assert unique_edit(lines, 6, "    return 2") == ("    return 0", "    return 2")
    assert unique_edit(lines, 3, "        return 2") == (
        "    if x:\n        return 1",
        "    if x:\n        return 2",
    )
    assert (
        unique_edit(["a", "a", "a", "a", "a", "a", "a", "a", "a"], 5, "b") is None
    )  # no context makes it unique


def test_ranked_lines_keep_every_line_a_failing_test_ran_best_first() -> None:
    spectra = Spectra(
        2,
        4,
        {
            "pkg/a.py": {3: (2, 0), 4: (1, 0), 5: (2, 4), 6: (0, 4)},
            "pkg/b.py": {1: (2, 1)},
            "tests/test_a.py": {1: (2, 4)},
        },
    )
    assert [(s.path, s.line) for s in ranked_lines(spectra, ["pkg/a.py"])] == [
        ("pkg/a.py", 3),
        ("pkg/a.py", 4),
        ("pkg/a.py", 5),  # 6 ran by no failing test
    ]
    assert [(s.path, s.line) for s in ranked_lines(spectra, [])] == [
        ("pkg/a.py", 3),
        ("pkg/b.py", 1),
        ("pkg/a.py", 4),
        ("pkg/a.py", 5),  # any non-test file
    ]
