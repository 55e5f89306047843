"""Reading a version's mean log-probability from a server's echoed prompt: aligned entries (OpenAI, vLLM), entries
shifted by one (llama-cpp-python without a BOS token), none, malformed; and the tie-break it gives the ranking."""

from __future__ import annotations

import pytest

from lsp_agent.agent.repair.line_alternatives import alternatives_note, ranked
from lsp_agent.agent.repair.line_likelihood import middle_logprob
from lsp_agent.testing.scripted_replies import prompt_logprobs

HEAD = "<|fim_prefix|>def f(x):\n<|fim_suffix|>\n<|fim_middle|>"


def test_the_mean_is_over_the_versions_tokens_only() -> None:
    # the scripted server's tokens: the prompt's, then one generated token (not part of the version)
    logprobs = prompt_logprobs(HEAD + "    return x", {"return": -1.0, "x": -3.0}, generated=" x")
    assert logprobs["tokens"][-4:] == ["return", " ", "x", " x"]
    # "    " (-2.0, unscored), "return" (-1.0), " " (-2.0), "x" (-3.0): the generated " x" is left out
    assert middle_logprob(logprobs, "    return x") == pytest.approx((-2.0 - 1.0 - 2.0 - 3.0) / 4)


def test_entries_shifted_by_one_are_read_from_the_alternatives_of_the_position_before() -> None:
    # as llama-cpp-python sends them for Qwen2.5-Coder (seen on m15.gguf): each entry is the next position's
    # distribution, so the following token is among the alternatives everywhere and token_logprobs are nonsense
    tokens = ["def", " f", "(x", "):\n", "   ", " return", " x", "\n"]
    following = [{tokens[i + 1]: -0.5, "zz": -4.0} for i in range(len(tokens) - 1)] + [{"\n": -0.1}]
    following[4] = {
        " x": -0.7,
        " return": -0.25,
        "zz": -5.0,
    }  # the distribution predicting " return"... shifted
    following[5] = {" y": -0.3, "zz": -6.0}  # " x" is not among them: at most the least likely, -6.0
    logprobs = {
        "tokens": tokens,
        "token_logprobs": [None, -12.0, -16.0, -18.0, -17.0, -15.0, -16.0, -0.1],
        "top_logprobs": [None, *following[1:]],
    }
    # "   " from the alternatives before it (-0.5), " return" (-0.25), " x" (not among them: -6.0)
    assert middle_logprob(logprobs, "    return x") == pytest.approx((-0.5 - 0.25 - 6.0) / 3)


def test_aligned_entries_are_taken_as_sent() -> None:
    tokens = ["def", " f", "(x", "):\n", "   ", " return", " x", "\n"]
    tops = [None] + [
        {token: -1.0, "zz": -3.0} for token in tokens[1:]
    ]  # each holds its own token, not the next
    logprobs = {
        "tokens": tokens,
        "token_logprobs": [None, -1, -1, -1, -1, -0.5, -1.5, -0.1],
        "top_logprobs": tops,
    }
    assert middle_logprob(logprobs, "    return x") == pytest.approx(-1.0)


@pytest.mark.parametrize(
    "logprobs",
    [
        None,
        {"content": [{"token": "\n", "logprob": -0.1}]},  # chat-style: the generated token only
        {"tokens": ["\n"], "token_logprobs": [-0.1]},  # llama-server: no prompt tokens
        {"tokens": ["a", "b"], "token_logprobs": [None]},
        {"tokens": ["    return x", "\n"], "token_logprobs": [float("nan"), -0.1]},
        {"tokens": ["    return x", "\n"], "token_logprobs": [None, -0.1]},  # the first token has none
        "garbage",
    ],
)
def test_no_or_malformed_logprobs_give_no_score(logprobs: object) -> None:
    assert middle_logprob(logprobs, "    return x") is None


def test_scores_break_ties_of_token_counts_only() -> None:
    line = "        return low"
    versions = ["        return 10", "        return high", "        return min(x, high)"]
    assert ranked(line, versions) == versions  # no scores: the order found
    scores = {"        return 10": -2.5, "        return high": -0.2, "        return min(x, high)": -0.1}
    # the likeliest of all changes 6 tokens: the fewest tokens still come first
    assert ranked(line, versions, scores) == [
        "        return high",
        "        return 10",
        "        return min(x, high)",
    ]
    note = alternatives_note(line, ranked(line, versions, scores), scores)
    assert (
        "chosen `return high` (1 token changed, mean log-probability -0.20, the smallest change, and the one"
        in note
    )
    assert "The model prefers `return min(x, high)`" in note
