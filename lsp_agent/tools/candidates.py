"""Find the file regions closest to an edit's old_text that did not match, so the model can retry exactly."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from lsp_agent.tools.common import number_lines, split_lines

ANCHOR_LINES = 8  # first non-blank lines of old_text used to find where a window may start
ANCHOR_CUTOFF = 0.6
WINDOW_CUTOFF = 0.5
MAX_WINDOWS = 300
MAX_SHOWN_LINES = 25
_NUMBERED = re.compile(r"^\s*\d+\s*[:|]\s?")


@dataclass(frozen=True)
class Candidate:
    """A region of the file that resembles old_text."""

    start: int  # 1-based
    end: int
    similarity: float
    whitespace_only: bool
    numbered: str


def looks_line_numbered(text: str) -> bool:
    """True when every non-blank line starts like read_file output ('12: ...')."""
    lines = [line for line in split_lines(text) if line.strip()]
    return bool(lines) and all(_NUMBERED.match(line) for line in lines)


def closest_candidates(text: str, old_text: str, limit: int = 2) -> list[Candidate]:
    """Up to `limit` non-overlapping regions most similar to old_text (difflib ratio), best first."""
    lines = split_lines(text)
    wanted = split_lines(old_text)
    while wanted and not wanted[0].strip():
        wanted.pop(0)
    while wanted and not wanted[-1].strip():
        wanted.pop()
    if not wanted or not lines:
        return []
    if looks_line_numbered(old_text):
        wanted = [_NUMBERED.sub("", line, count=1) for line in wanted]
    n = len(wanted)
    starts = _anchor_starts(lines, wanted)
    joined = "\n".join(wanted)
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(joined)
    scored: list[tuple[float, int]] = []
    for start in starts:
        window = "\n".join(lines[start : start + n])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() < WINDOW_CUTOFF or matcher.quick_ratio() < WINDOW_CUTOFF:
            continue
        score = matcher.ratio()
        if score >= WINDOW_CUTOFF:
            scored.append((score, start))
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[Candidate] = []
    taken: list[range] = []
    squashed = [line.strip() for line in wanted]
    for score, start in scored:
        span = range(start, min(start + n, len(lines)))
        if any(set(span) & set(t) for t in taken):
            continue
        taken.append(span)
        region = lines[span.start : span.stop]
        whitespace_only = [line.strip() for line in region] == squashed
        shown = region[:MAX_SHOWN_LINES]
        numbered = number_lines(shown, span.start + 1, 300)
        if len(region) > len(shown):
            numbered += f"\n... ({len(region) - len(shown)} more lines)"
        chosen.append(Candidate(span.start + 1, span.stop, score, whitespace_only, numbered))
        if len(chosen) >= limit:
            break
    return chosen


def _anchor_starts(lines: list[str], wanted: list[str]) -> list[int]:
    """Window starts suggested by file lines that resemble one of old_text's first lines (best first)."""
    n = len(wanted)
    last_start = max(0, len(lines) - n)
    best: dict[int, float] = {}
    matcher = SequenceMatcher(None, autojunk=False)
    stripped = [line.strip() for line in lines]
    for j, want in enumerate(wanted[:ANCHOR_LINES]):
        target = want.strip()
        if len(target) < 2:
            continue
        matcher.set_seq2(target)
        for i, line in enumerate(stripped):
            if not line:
                continue
            matcher.set_seq1(line)
            if matcher.real_quick_ratio() < ANCHOR_CUTOFF or matcher.quick_ratio() < ANCHOR_CUTOFF:
                continue
            ratio = matcher.ratio()
            if ratio >= ANCHOR_CUTOFF:
                start = min(max(0, i - j), last_start)
                best[start] = max(best.get(start, 0.0), ratio)
    ranked = sorted(best, key=lambda s: (-best[s], s))
    return ranked[:MAX_WINDOWS]
