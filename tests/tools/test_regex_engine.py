"""Model-chosen regular expressions: linear time under RE2, a time limit for the rest, nothing blocks."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from lsp_agent.tools import patterns
from lsp_agent.tools.registry import default_registry

EVIL_LINE = "a" * 26 + "!"
SLOW_FALLBACK = r"(?=a)(a|aa)+$"  # a lookahead keeps it off RE2; (a|aa)+ backtracks exponentially


@pytest.fixture
def evil(workspace: Path) -> Path:
    (workspace / "evil.txt").write_text(f"{EVIL_LINE}\n{'a' * 5000}!\n" + "aaaa!\n" * 2000)
    return workspace


def test_nested_quantifiers_run_in_linear_time(evil, ctx, call):
    started = time.perf_counter()
    res = call(ctx, "search_text", pattern="(a+)+$", regex=True)
    assert res.ok and res.output.startswith("No matches for '(a+)+$'")
    res = call(ctx, "search_text", pattern="(a+)+!", regex=True, path="evil.txt")
    assert res.ok and res.output.splitlines()[0] == f"evil.txt:1:{EVIL_LINE}"
    assert time.perf_counter() - started < 5  # Python's re needs ~10 s for the first line alone


def test_lookarounds_and_backreferences_still_work(evil, ctx, call):
    out = call(ctx, "search_text", pattern=r"(\w)\1", regex=True, path="src/app.py").output
    assert "src/app.py:7:" in out  # "greet": the only doubled letter in a code line
    out = call(ctx, "search_text", pattern=r"greet(?=\()", regex=True).output
    assert "src/app.py:12:" in out and "docs/guide.md" not in out
    out = call(ctx, "search_text", pattern=r"(?<!def )greet\(", regex=True, path="src").output
    assert out.splitlines() == ['src/app.py:12:return greet(os.environ.get("USER", "you"))']


def test_a_backtracking_pattern_is_stopped_with_advice(evil, ctx, call, monkeypatch):
    monkeypatch.setattr(patterns, "FALLBACK_SECONDS", 0.5)
    started = time.perf_counter()
    res = call(ctx, "search_text", pattern=SLOW_FALLBACK, regex=True)
    assert time.perf_counter() - started < 5
    assert not res.ok
    assert res.output.startswith(f"Error: the regular expression {SLOW_FALLBACK!r} was stopped after 0.5 s")
    assert "nested quantifier" in res.output and "regex=false" in res.output


async def test_other_calls_are_answered_while_a_slow_pattern_runs(evil, make_ctx, monkeypatch):
    monkeypatch.setattr(patterns, "FALLBACK_SECONDS", 1.0)
    registry = default_registry()
    ctx = make_ctx()
    search = asyncio.create_task(
        registry.execute("search_text", {"pattern": SLOW_FALLBACK, "regex": True}, ctx)
    )
    await asyncio.sleep(0.2)  # the search is matching now
    started = time.perf_counter()
    read = await registry.execute("read_file", {"path": "README.md"}, ctx)
    latency = time.perf_counter() - started
    result = await search
    assert read.ok and read.output == "1: Hello project"
    assert latency < 0.5, f"read_file waited {latency:.2f} s behind the regex"
    assert not result.ok and "was stopped after" in result.output


def test_invalid_patterns_say_what_is_wrong(ctx, call):
    res = call(ctx, "search_text", pattern="(unclosed", regex=True)
    assert not res.ok and res.output.startswith("Error: invalid regular expression '(unclosed'")
    assert "regex=false" in res.output
    res = call(ctx, "search_text", pattern="(unclosed")  # literal: fine
    assert res.ok and res.output.startswith("No matches for '(unclosed'")


def test_a_bad_glob_class_is_named(workspace, ctx, call):
    res = call(ctx, "list_files", pattern="[z-a].py")
    assert not res.ok and res.output.startswith("Error: invalid glob pattern '[z-a].py' (")
    assert "invalid character class range: z-a" in res.output


def test_crlf_files_match_end_anchors(workspace, ctx, call):
    (workspace / "dos.txt").write_bytes(b"first line\r\nsecond line\r\n")
    out = call(ctx, "search_text", pattern="line$", regex=True, path="dos.txt").output
    assert out.splitlines() == ["dos.txt:1:first line", "dos.txt:2:second line"]


def test_a_hostile_glob_is_linear_too(workspace, ctx, call):
    (workspace / ("a" * 200 + ".txt")).write_text("x\n")
    started = time.perf_counter()
    res = call(ctx, "list_files", pattern="*a*a*a*a*a*a*a*a*a*a*a*a*b")
    assert res.ok and res.output.startswith("No files match")
    assert time.perf_counter() - started < 5


TEXT = "alpha beta\ngamma\r\n  délta épsilon\n\nend a\nb end\nzeta ünïcode zeta\nlast"


@pytest.mark.parametrize(
    "pattern",
    [
        r"a\s+b",
        r"^\s*$",
        r"^",
        r"a$",
        r"z?",
        r"é\w+",
        r"zeta$",
        r"(?i)ÜNÏ",
        r"^end|end$",
        r"\bb",
        r"t\w*a\b",
        "last",
    ],
)
def test_whole_file_jumps_find_exactly_the_lines_a_line_by_line_search_finds(pattern):
    expected = []
    for number, line in enumerate(TEXT.replace("\r\n", "\n").split("\n"), start=1):
        match = re.search(pattern, line)
        if match:
            expected.append((number, line, match.start(), match.end()))
    compiled = patterns.compile_search(pattern, is_regex=True, case_sensitive=True)
    assert compiled.engine == "re2"
    found = [(n, line, m.start(), m.end()) for n, line, m in compiled.matching_lines(TEXT)]
    assert found == expected
