"""Code added by line repairs, the text side: where a missing statement is looked for, the infill prompts that
leave a hole between two lines or at the end of a condition, and the versions read back from the filled text."""

from __future__ import annotations

from lsp_agent.agent.repair.line_insertions import (
    condition_parts,
    empty_callees,
    extended_version,
    extension_prompt,
    inserted_version,
    insertion_gaps,
    insertion_prompt,
    named_returnless_gaps,
    returnless_gaps,
)

TOTAL = '''def total(values):
    """Sum them."""
    result = 0
    for v in values:
        result += v


x = 1
'''
TEMPLATE = "<P>{prefix}<S>{suffix}<M>"


def test_a_missing_statement_is_looked_for_at_the_end_and_start_of_the_function_then_after_the_line() -> None:
    assert insertion_gaps(TOTAL, 4) == [5, 2, 4]  # after `result += v`, after the docstring, after the `for`
    assert insertion_gaps(TOTAL, 5) == [5, 2]
    assert insertion_gaps(TOTAL, 8) == [8]  # no function
    assert insertion_gaps("def broken(:\n", 1) == [1]


def test_an_insertion_prompt_leaves_nothing_out_and_reads_back_the_new_lines() -> None:
    lines = TOTAL.splitlines()
    prompt = insertion_prompt(TEMPLATE, lines, 5)
    assert (
        prompt.startswith("<P>def total(values):\n") and "        result += v\n<S>\n\n\nx = 1\n<M>" in prompt
    )
    assert inserted_version("    return result\n", lines, 5) == "        result += v\n    return result"
    guard = inserted_version("    if not values:\n        return None\n    # more\n", lines, 2)
    assert guard == '    """Sum them."""\n    if not values:\n        return None'
    # written without indentation: indented like the line before the hole, deeper when that opens a block
    assert inserted_version("result = 0", lines, 5) == "        result += v\n        result = 0"
    assert inserted_version("result = 0", lines, 4) == "    for v in values:\n        result = 0"
    assert inserted_version("        result += v\n", lines, 5) is None  # a copy of the line before the hole
    assert inserted_version("# nothing\n\n", lines, 5) is None
    assert inserted_version("    if not values:", lines, 2) is None  # a header without its body


def test_a_condition_is_extended_after_its_own_joiner_at_the_hole() -> None:
    assert condition_parts("    if a and b:  # both") == ("    if a and b", "and", ":  # both")
    assert condition_parts("    elif x > 1:") == (
        "    elif x > 1",
        "or",
        ":",
    )  # a single test: a missing case
    assert condition_parts("    while a or b:") == ("    while a or b", "or", ":")
    assert condition_parts("    return a and b") is None and condition_parts("    if (a:") is None
    lines = ["def f(a, b, c):", "    if a and b:", "        return 1", "    return 0"]
    prompt = extension_prompt(TEMPLATE, lines, 2)
    assert prompt == "<P>def f(a, b, c):\n    if a and b and <S>:\n        return 1\n    return 0\n<M>"
    assert extension_prompt(TEMPLATE, lines, 3) is None
    assert extended_version("c:\n        return 1", lines[1]) == "    if a and b and c:"
    assert extended_version(" c > 0\n", lines[1]) == "    if a and b and c > 0:"
    assert extended_version("\n", lines[1]) is None and extended_version("c +", lines[1]) is None


CACHED = '''def cached(cache, key, compute):
    try:
        return cache[key]
    except KeyError:
        pass
    try:
        value = compute(key)
        with LOCK:
            cache[key] = value
    finally:
        LOCK.release()


def name(word):
    """Its name."""


def shout(word):
    return name(word).upper()
'''


def test_the_ends_a_function_falls_off_are_where_a_missing_return_goes() -> None:
    # the whole try, then its body's end (the `with` block's, the same line), not the first try's `return`
    assert returnless_gaps(CACHED, 3) == [11, 9]
    assert returnless_gaps(TOTAL, 4) == [5]  # the end of the `for` loop
    assert returnless_gaps(CACHED, 19) == []  # it returns
    assert returnless_gaps("x = 1\n", 1) == [] and returnless_gaps("def broken(:\n", 1) == []
    assert (
        named_returnless_gaps(CACHED, "cached") == [11, 9] and named_returnless_gaps(CACHED, "nothing") == []
    )
    assert named_returnless_gaps(CACHED, "name") == [15]  # only a docstring left


def test_a_called_function_with_only_its_docstring_is_a_gap_of_its_own() -> None:
    assert empty_callees(CACHED, 19) == [15]  # `name(word)`: nothing but the docstring
    assert empty_callees(CACHED, 7) == [] and empty_callees("def broken(:\n", 1) == []
