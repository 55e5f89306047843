"""What the code itself shows is missing or misread (line_evidence.py): functions with only a docstring that
promise a value, values built and dropped, counters a class only ever decreases, guards where a None was
formatted into text, functions that return a value on some paths only, and one of two values unpacked together
read in place of the other."""

from __future__ import annotations

from lsp_agent.agent.repair.line_evidence import (
    dropped_values,
    empty_promises,
    formatted_none,
    formatting_starts,
    misread_values,
    mixed_returns,
    unbalanced_counters,
)

PROMISES = '''import abc
from typing import Protocol


def translated(message: str) -> str:
    """Translate it."""


def plural(word):
    """The plural.

    Returns:
        str: the word's plural.
    """


def deactivate() -> None:
    """Nothing to return."""


def undocumented():
    """Says nothing of a value."""


class Base(abc.ABC):
    @abc.abstractmethod
    def name(self) -> str:
        """Each subclass says."""


class Named(Protocol):
    def name(self) -> str:
        """A protocol's member."""


def done(x: int) -> int:
    """Has a body."""
    return x
'''


def test_a_function_with_only_a_docstring_that_promises_a_value_misses_its_statement() -> None:
    # translated() by its annotation, plural() by its Returns section; no None functions, abstract or protocols
    assert empty_promises(PROMISES) == [6, 14]
    assert empty_promises("def broken(:\n") == []


DROPPED = """def add(self, other):
    if isinstance(other, Add):
        total = Add(self.n + other.n)
        total.extra = other.extra
        return total
    try:
        total = Add(self.n)
        total.extra = self.extra + other
    except AttributeError:
        pass
    return NotImplemented


def count(items):
    seen = set()
    for item in items:
        if item in seen:
            continue
        seen.add(item)
    data = cache_of(items)
    return len(seen)


def store(self, key, value):
    data = self.data
    data[key] = value
    last = None
    for value in self.values:
        if last is not None:
            print(last)
        last = value


def lowered(word):
    word = word.strip()
    word = word.replace("-", "_")
"""


def test_a_value_built_and_never_read_afterwards_misses_the_statement_that_uses_it() -> None:
    # `total` built and configured in the try body, then dropped: a line after its block, not after the return
    assert dropped_values(DROPPED, 8) == [8]
    assert dropped_values(DROPPED, 2) == [8]  # any line of the function
    # `data` computed and never read: the gap before the block's closing return
    assert dropped_values(DROPPED, 15) == [20]
    # an alias's stores change the object it aliases; a loop reads `last` again on its next round
    assert dropped_values(DROPPED, 25) == []
    assert dropped_values(DROPPED, 35) == [36]  # the word rebuilt and never returned
    assert dropped_values(DROPPED, 40) == [] and dropped_values("x = 1\n", 1) == []


COUNTER = """class Timer:
    def __init__(self):
        self.nesting = 0
        self.calls = 0

    def __enter__(self):
        if self.nesting == 0:
            self.time = 1
        self.calls += 1
        return self.time

    def __exit__(self, *exc):
        self.nesting -= 1
        self.calls -= 1

    def __call__(self):
        return self.nesting


class Plain:
    def release(self):
        self.held -= 1
"""


def test_a_counter_a_class_only_decreases_misses_its_increase_in_the_paired_method() -> None:
    # nesting goes down in __exit__ and never up: before __enter__'s return; calls goes both ways
    assert unbalanced_counters(COUNTER, 16) == [9]
    assert unbalanced_counters(COUNTER, 21) == []  # no acquire() to put it in
    assert unbalanced_counters(COUNTER, 24) == [] and unbalanced_counters("x = 1\n", 1) == []


FORMATTING = '''class Complement:
    def __repr__(self):
        return f"complement({self.items!r})"

    def label(self):
        """The label."""
        return "%s items" % len(self.items)

    def size(self):
        return len(self.items)

    def plain(self):
        return "complement"
'''


def test_where_a_none_was_formatted_into_text_a_guard_goes_at_the_start_of_the_formatting_function() -> None:
    assert formatted_none("E   assert 'x' in 'complement(complement(None))'")
    assert formatted_none("E   AssertionError: assert '5None' == '5th'")
    assert formatted_none('E   assert "None items" == "3 items"')
    assert not formatted_none("E   TypeError: 'NoneType' object is not callable")  # a None used, not shown
    assert not formatted_none("E   assert None == 3") and not formatted_none("E   assert 'Nonesuch' == 'x'")
    assert not formatted_none("    x = 'None'")  # not an error line
    assert formatting_starts(FORMATTING, 3) == [2]
    assert formatting_starts(FORMATTING, 7) == [6]  # after the docstring
    assert formatting_starts(FORMATTING, 10) == [] and formatting_starts(FORMATTING, 13) == []


MISREAD = """def split(total):
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        hours,
        minutes,
        minutes,
    ]
    return parts


def pairs(items):
    for key, value in items:
        print(key)
    for item in items:
        first, second = item
        print(first)
"""


def test_of_two_values_unpacked_together_a_line_reading_the_one_read_may_have_meant_the_other() -> None:
    # secs is never read while minutes is: the lines reading minutes after it, the later first
    assert misread_values(MISREAD, 2) == [7, 6]
    # a loop target, or an assignment inside a loop (the next round may read it), is no evidence
    assert misread_values(MISREAD, 13) == [] and misread_values("x = 1\n", 1) == []


MIXED = """def bound(self, obj):
    if obj is None:
        return self
    self.calls += 1


def compare(a, b):
    if a is None:
        return False
    else:
        return a < b


def items(values):
    for v in values:
        if v:
            return v
        yield v


def log(message):
    if not message:
        return
    print(message)
"""


def test_a_function_that_returns_a_value_on_some_paths_and_falls_off_its_end_on_another_misses_a_return() -> (
    None
):
    assert mixed_returns(MIXED, 2) == [4]  # after `return self`, the rest falls off the end
    assert mixed_returns(MIXED, 8) == []  # every path returns
    assert mixed_returns(MIXED, 16) == []  # a generator
    assert mixed_returns(MIXED, 22) == []  # no path returns a value
    assert mixed_returns("x = 1\n", 1) == []
