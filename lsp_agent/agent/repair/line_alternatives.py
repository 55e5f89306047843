"""When several versions of a line pass the tests: which to choose, which simpler ones to try, what to tell the user.

A version the tests pass with is plausible, not necessarily correct (automated program repair calls it a plausible
patch): the recorded `if word.islower() and len(word) > len(best):` passes `longest_word`'s tests and is wrong. So
line repairs (agent/repair/line_repair.py) keep testing the versions a reply already brought once one passes, try the
simpler versions between the line and a passing one (each part of the change alone: GenProg's patch minimization on
Python tokens), and choose among those that pass the one that changes the fewest tokens of the line (a one-token bug
is most often fixed by a one-token change), and among those that change as many tokens the one the code model
finds likelier in the line's place (line_likelihood.py, when the server gives log-probabilities); the summary says
how many different versions pass, and names them, so the user knows the tests did not decide between them.
"""

from __future__ import annotations

import io
import math
import tokenize
from difflib import SequenceMatcher
from itertools import combinations

MAX_SIMPLER = 6  # simpler versions tested per passing version
MAX_PARTS = 4  # a change of more parts is not taken apart (its subsets would be too many to test)
_SKIPPED_TOKENS = {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}

Token = tuple[str, int]  # a token's text and its column in the line


def line_tokens(code: str) -> list[Token] | None:
    """The Python tokens of one line of code (comments included), or None when it does not tokenize as one line."""
    tokens: list[Token] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in _SKIPPED_TOKENS:
                continue
            if token.start[0] != 1:
                return None
            tokens.append((token.string, token.start[1]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return tokens


def _parts(original: list[Token], version: list[Token]) -> list[tuple[str, int, int, int, int]]:
    """The changed parts between two token lists (difflib opcodes other than `equal`)."""
    matcher = SequenceMatcher(None, [t for t, _ in original], [t for t, _ in version], autojunk=False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def token_distance(original: str, version: str) -> int:
    """How many tokens of the line a version changes (inserted, deleted or replaced); by characters when either
    does not tokenize."""
    old, new = line_tokens(original.strip()), line_tokens(version.strip())
    if old is None or new is None:
        return sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in _char_parts(original, version))
    return sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in _parts(old, new))


def _char_parts(original: str, version: str) -> list[tuple[str, int, int, int, int]]:
    """The changed parts of two texts by characters."""
    matcher = SequenceMatcher(None, original.strip(), version.strip(), autojunk=False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def simpler_versions(original: str, version: str, limit: int = MAX_SIMPLER) -> list[str]:
    """Versions that make only some of the parts of `version`'s change to `original` (fewest parts first), indented
    like `original`; none when the change is one part (or more than MAX_PARTS)."""
    indent = original[: len(original) - len(original.lstrip())]
    old_code, new_code = original.strip(), version.strip()
    old, new = line_tokens(old_code), line_tokens(new_code)
    if old is None or new is None:
        return []
    parts = _parts(old, new)
    if not 1 < len(parts) <= MAX_PARTS:
        return []
    found: list[str] = []
    for size in range(1, len(parts)):
        for chosen in combinations(parts, size):
            text = _with_parts(old_code, old, new_code, new, chosen)
            if text not in (old_code, new_code) and indent + text not in found:
                found.append(indent + text)
    return found[:limit]


def _with_parts(
    old_code: str,
    old: list[Token],
    new_code: str,
    new: list[Token],
    parts: tuple[tuple[str, int, int, int, int], ...],
) -> str:
    """`old_code` with only `parts` of the change to `new_code` made (each part's text with the space after it)."""

    def start(tokens: list[Token], code: str, index: int) -> int:
        return tokens[index][1] if index < len(tokens) else len(code)

    pieces, position = [], 0
    for _, i1, i2, j1, j2 in parts:  # in line order (opcodes are)
        begin, end = start(old, old_code, i1), start(old, old_code, i2)
        pieces += [old_code[position:begin], new_code[start(new, new_code, j1) : start(new, new_code, j2)]]
        position = end
    pieces.append(old_code[position:])
    return "".join(pieces).rstrip()


def ranked(original: str, versions: list[str], scores: dict[str, float] | None = None) -> list[str]:
    """Passing versions, the smallest change to `original` first; among versions that change as many tokens, the one
    the model finds likelier in the line's place first (`scores`: mean log-probabilities, line_likelihood.py), else
    in the order they were found."""
    scores = scores or {}
    return sorted(
        versions, key=lambda version: (token_distance(original, version), -scores.get(version, -math.inf))
    )


def alternatives_note(original: str, versions: list[str], scores: dict[str, float] | None = None) -> str:
    """What the summary says when more than one version passes: how many, which was chosen and why, the others,
    and which the model prefers when it scored them."""
    if len(versions) < 2:
        return ""
    scores = scores or {}

    def size(version: str) -> str:
        count = token_distance(original, version)
        shown = f"{count} token{'s' if count != 1 else ''} changed"
        return f"{shown}, mean log-probability {scores[version]:.2f}" if version in scores else shown

    chosen, *others = versions
    tied = [v for v in others if token_distance(original, v) == token_distance(original, chosen)]
    why = "the smallest change"
    if tied and chosen in scores:
        why += ", and the one the model finds likeliest of those as small"
    listed = "; ".join(f"`{other.strip()}` ({size(other)})" for other in others)
    return (
        f"{len(versions)} different versions of the line pass the tests, so the tests do not decide which is "
        f"right: chosen `{chosen.strip()}` ({size(chosen)}, {why}); also passing: {listed}. "
        f"{_preferred(scores)}Check the change before you keep it."
    )


def _preferred(scores: dict[str, float]) -> str:
    """The sentence naming the version the model finds likeliest."""
    if len(scores) < 2:
        return ""
    best = max(scores, key=lambda version: scores[version])
    return f"The model prefers `{best.strip()}` (per token, in the line's place; higher is likelier). "
