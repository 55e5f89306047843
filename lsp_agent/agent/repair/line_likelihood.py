"""The code model's own likelihood of a version of a line: a tie-breaker among versions the tests pass with.

Each version goes in the line's place in the fill-in-the-middle prompt the infill path builds (line_infill.py), and
the prompt is sent to the text completions endpoint with `echo` and `logprobs` (what OpenAI's legacy completions,
llama-cpp-python and vLLM serve): the mean log-probability of the version's tokens, given the code before and
after it, says how natural the model finds it there. A server that sends no prompt log-probabilities (llama.cpp's
llama-server scores only the tokens it generates) or malformed ones gives no score, and scoring stops for the run.

llama-cpp-python shifts prompt log-probabilities by one token for models without a BOS token (Qwen2.5-Coder among
them; abetlen/llama-cpp-python#1983): each entry is the next position's distribution. That shows in the
alternatives it sends (the following token is among them at nearly every position, which an aligned server's are
not), and the score is then read from them.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from lsp_agent.agent.repair.line_infill import infill_prompt

log = logging.getLogger(__name__)

MAX_SCORED = 6  # versions scored per line (the smallest changes first)
SHIFTED = (
    0.5  # share of positions whose alternatives hold the following token: the entries are shifted by one
)


def _field(logprobs: Any, name: str) -> Any:
    """A field of the logprobs object, whether litellm kept it as a dict or an object."""
    return logprobs.get(name) if isinstance(logprobs, dict) else getattr(logprobs, name, None)


def _numbers(values: Any) -> bool:
    """Whether every value is a finite number (None allowed: a server's first token has none)."""
    return all(v is None or (isinstance(v, int | float) and math.isfinite(v)) for v in values)


def _token_table(logprobs: Any) -> tuple[list[str], list[Any], list[Any]] | None:
    """(tokens, token log-probabilities, alternatives) when the server sent them consistently."""
    tokens, values, tops = (_field(logprobs, n) for n in ("tokens", "token_logprobs", "top_logprobs"))
    if (
        not isinstance(tokens, list)
        or not isinstance(values, list)
        or len(tokens) != len(values)
        or not tokens
    ):
        return None
    if not all(isinstance(t, str) for t in tokens) or not _numbers(values):
        return None
    if not isinstance(tops, list) or len(tops) != len(tokens):
        tops = [None] * len(tokens)
    tops = [top if isinstance(top, dict) and _numbers(top.values()) else None for top in tops]
    return tokens, values, tops


def _shifted(tokens: list[str], tops: list[Any]) -> bool:
    """Whether each entry scores the following position (llama-cpp-python without a BOS token)."""
    pairs = [(top, tokens[i + 1]) for i, top in enumerate(tops[:-1]) if top]
    return bool(pairs) and sum(following in top for top, following in pairs) / len(pairs) >= SHIFTED


def _span(tokens: list[str], middle: str) -> list[int]:
    """The indices of the tokens that start inside the last place `middle` takes in the echoed text (not inside
    the generated token that ends it). Found by text, not by the server's offsets: llama-cpp-python counts them on
    text without the special tokens (the template's <|fim_middle|>)."""
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    text = "".join(tokens)
    at = text.rfind(middle)
    if at >= starts[-2] and len(tokens) > 1:  # inside the last (generated) token: the one before it
        at = text.rfind(middle, 0, starts[-2] + len(middle) - 1)
    if at < 0 or not middle:
        return []
    return [i for i in range(len(tokens)) if at <= starts[i] < at + len(middle)]


def middle_logprob(logprobs: Any, middle: str) -> float | None:
    """The mean log-probability of the echoed prompt's tokens that make up `middle` (the version, at the prompt's
    end), or None when the server sent none for them or sent something else."""
    table = _token_table(logprobs)
    if table is None:
        return None
    tokens, values, tops = table
    inside = _span(tokens, middle)
    if not inside:
        return None
    if _shifted(tokens, tops):  # the entry before each token holds its distribution
        found = []
        for i in inside:
            top = tops[i - 1] if i > 0 else None
            if not top:
                return None
            found.append(top.get(tokens[i], min(top.values())))  # not among them: at most the least likely
    else:
        found = [values[i] for i in inside]
    if any(value is None for value in found):
        return None
    return sum(found) / len(found)


async def likelihoods(
    run: Any, template: str, lines: list[str], number: int, versions: list[str]
) -> dict[str, float]:
    """Each version's mean log-probability in line `number`'s place (1-based), the first MAX_SCORED of them; empty
    as soon as one gets no score (the signal is then absent, not partial)."""
    head = infill_prompt(template, lines, number)
    scores: dict[str, float] = {}
    for version in versions[:MAX_SCORED]:
        run.check_stop()
        reply = await run.conversation.score(head + version)
        score = None if reply is None else middle_logprob(reply.logprobs, version)
        if score is None:
            log.info(
                "the model server gave no log-probabilities for the prompt: versions ranked without them"
            )
            return {}
        scores[version] = score
    return scores
