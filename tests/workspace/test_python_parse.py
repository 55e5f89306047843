"""Python parses from several threads at once: CPython 3.11's AST constructor shares its recursion depth between
threads (python/cpython#106905), which refused a correct fix in the repair benchmark with a spurious SystemError."""

from __future__ import annotations

import ast
import gc
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lsp_agent.agent.model import client as model
from lsp_agent.workspace.python_parse import parse_python

SOURCE = Path(model.__file__).read_text(encoding="utf-8")  # 400 lines of real code


@pytest.fixture
def thread_switches_mid_parse() -> Iterator[None]:
    """A garbage collection during a parse (often, here) lets another thread run, as it can in a busy process."""
    threshold = gc.get_threshold()
    switch = lambda phase, info: time.sleep(0)  # noqa: E731 - a gc callback
    gc.callbacks.append(switch)
    gc.set_threshold(50)
    yield
    gc.callbacks.remove(switch)
    gc.set_threshold(*threshold)


def spurious_errors(parse: Callable[[str], object], rounds: int) -> list[str]:
    """The SystemErrors three threads parsing SOURCE up to `rounds` times each meet (all stop at the first)."""
    errors: list[str] = []

    def parse_all() -> None:
        for _ in range(rounds):
            if errors:
                return
            try:
                parse(SOURCE)
            except SystemError as error:
                errors.append(str(error))

    threads = [threading.Thread(target=parse_all) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.slow
@pytest.mark.usefixtures("thread_switches_mid_parse")
def test_parses_from_several_threads_at_once_meet_no_spurious_system_error() -> None:
    errors = spurious_errors(ast.parse, 60)
    if not errors:
        pytest.skip("this Python's ast.parse showed no recursion depth mismatch across threads this time")
    assert "recursion depth mismatch" in errors[0]
    assert spurious_errors(parse_python, 60) == []


def test_a_parse_reads_python_without_warnings_and_raises_like_ast_parse() -> None:
    assert isinstance(parse_python('x = "\\d"\n', "m.py"), ast.Module)  # an invalid escape warns in ast.parse
    with pytest.raises(SyntaxError) as info:
        parse_python("def f(:\n", "pkg/m.py")
    assert info.value.filename == "pkg/m.py" and info.value.lineno == 1
    with pytest.raises((SyntaxError, ValueError)):  # a NUL byte: ValueError before 3.11.4
        parse_python("x = 1\0")
