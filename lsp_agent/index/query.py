"""What a search query names: file paths, traceback frames, dotted and code-like identifiers, and plain prose.

An issue report is not a docstring: a stack trace names files and functions, a code block names identifiers,
and prose names concepts. `analyze_query` pulls the names out so the ranking can check which of them exist in
the index (strong evidence) and weight the rest of the words as prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<][\w<>.]*))?')
_PATH = re.compile(
    r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyi|pyx|js|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|rb|lua))\b"
)
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TICKS = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_MIXED_CASE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|^[A-Z][a-z]+[A-Z]")
_FILE_OR_HOST = re.compile(r"[\w.]*\.(py|txt|rst|md|html|org|com|io)")
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.|\$|In \[\d+\]:)", re.M)
TEST_WORDS = frozenset({"test", "tests", "testing", "pytest", "unittest", "testcase", "fixture", "fixtures"})
DOC_WORDS = frozenset({"doc", "docs", "documentation", "readme", "tutorial", "docstring"})
SHORT_QUERY_WORDS = (
    12  # a query this short that says "test" asks for tests; a long report may just mention them
)


@dataclass
class QueryAnalysis:
    """The parts of a query: named paths and identifiers (in order of first mention) and the query's terms."""

    text: str
    paths: list[str] = field(default_factory=list)  # as written, POSIX, without a leading ./ or /
    frames: list[tuple[str, int, str | None]] = field(
        default_factory=list
    )  # traceback (path, line, function)
    dotted: list[str] = field(
        default_factory=list
    )  # a.b.c: a module, a qualified symbol or an attribute chain
    identifiers: list[str] = field(
        default_factory=list
    )  # code-like names: in code, called, CamelCase, snake_case
    code: str = ""  # code blocks, inline code and interpreter lines, joined
    wants_tests: bool = False
    wants_docs: bool = False
    is_code_query: bool = False  # the whole query is one name or path (`MultiCommand.invoke`, `secho`)


def looks_like_code(name: str) -> bool:
    """CamelCase inside a word, snake_case, dunder or ALL_CAPS: not an English word."""
    core = name.strip("_")
    if not core:
        return False
    return "_" in core or name.startswith("_") or bool(_MIXED_CASE.search(core))


def written_alone(name: str, text: str) -> bool:
    """Whether `name` occurs in `text` on its own, not only as a part of a dotted or `::` path (`a.name.b`)."""
    return re.search(rf"(?<![\w.:]){re.escape(name)}(?![\w]|\.\w|::)", text) is not None


def _clean_path(raw: str) -> str:
    path = raw.replace("\\", "/")
    while path.startswith(("./", "/")):
        path = path[2:] if path.startswith("./") else path[1:]
    return path


def _add(items: list[str], value: str) -> None:
    if value and value not in items:
        items.append(value)


def analyze_query(text: str) -> QueryAnalysis:
    """Split a query (an identifier, a question or a whole issue report) into its named parts."""
    q = QueryAnalysis(text)
    for path, line, func in _FRAME.findall(text):
        q.frames.append((_clean_path(path), int(line), func or None))
        _add(q.paths, _clean_path(path))
        if func and not func.startswith("<"):
            _add(q.identifiers, func)
    for raw in _PATH.findall(text):
        if "." not in raw.rsplit(".", 1)[0] or "/" in raw:  # skip dotted module names that end in .py words
            _add(q.paths, _clean_path(raw))
    code_parts = _FENCE.findall(text) + _TICKS.findall(text)
    code_parts += [line for line in text.splitlines() if _PROMPT.match(line)]
    q.code = "\n".join(code_parts)
    for name in _DOTTED.findall(text):
        if not _FILE_OR_HOST.fullmatch(name) and not name[0].isdigit():
            _add(q.dotted, name)
    for name in _CALL.findall(text) + _IDENT.findall(q.code):
        if len(name) > 2:
            _add(q.identifiers, name)
    for name in _IDENT.findall(text):
        if looks_like_code(name):
            _add(q.identifiers, name)
    words = re.findall(r"[A-Za-z]+", text.lower())
    short = len(words) <= SHORT_QUERY_WORDS
    q.wants_tests = short and any(w in TEST_WORDS for w in words)
    q.wants_docs = short and any(w in DOC_WORDS for w in words)
    stripped = text.strip().strip("`")
    q.is_code_query = bool(re.fullmatch(r"[\w./:-]+", stripped)) and (
        "." in stripped or "/" in stripped or looks_like_code(stripped) or len(stripped.split()) == 1
    )
    return q
