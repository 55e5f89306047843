"""Parsing Python text into an AST, one thread at a time.

CPython 3.11 keeps the AST constructor's recursion depth in state that all threads share, so two parses running at
once (an edit checked in a worker thread while another thread parses) can fail with a spurious "SystemError: AST
constructor recursion depth mismatch" (python/cpython#106905). In the repair benchmark this refused a correct fix.
"""

from __future__ import annotations

import ast
import threading
import warnings

_ONE_AT_A_TIME = threading.Lock()


def parse_python(text: str, path: str = "<unknown>") -> ast.Module:
    """ast.parse(text) without SyntaxWarnings (invalid escapes are not errors), serialized across threads; the
    spurious SystemError a parse outside this module can still cause is retried once. Raises SyntaxError or
    ValueError (a NUL byte) like ast.parse."""
    with _ONE_AT_A_TIME, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, filename=path)
        except SystemError as error:
            if "recursion depth mismatch" not in str(error):
                raise
            return ast.parse(text, filename=path)
