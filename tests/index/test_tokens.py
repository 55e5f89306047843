"""Code-aware tokenizer: identifier splitting, whole identifiers, stemming, synonyms, stopwords."""

from __future__ import annotations

from lsp_agent.index.tokens import identifier_tokens, normalize_word, tokenize


def test_snake_and_camel_case_split_and_keep_whole() -> None:
    assert identifier_tokens("parse_json_file") == ("parse_json_file", "pars", "json", "file")
    assert identifier_tokens("HTTPResponseCode") == ("httpresponsecode", "http", "respons", "code")
    assert identifier_tokens("getX2") == ("getx2", "get", "2")


def test_single_words_are_not_duplicated() -> None:
    assert identifier_tokens("parser") == ("pars",)
    assert identifier_tokens("__init__") == ("initi",)


def test_stemming_and_synonyms_meet_in_the_middle() -> None:
    # A query's words and the code's abbreviations normalise to the same token.
    assert normalize_word("configuration") == normalize_word("cfg") == normalize_word("conf")
    assert normalize_word("directories") == normalize_word("dir")
    assert normalize_word("removing") == normalize_word("delete")
    assert normalize_word("parsing") == normalize_word("parser")


def test_stopwords_and_single_letters_dropped() -> None:
    assert tokenize("the x of a self") == []
    assert set(tokenize("Return the list of fields")) == {"return", "list", "field"}


def test_tokenize_counts_repeated_identifiers() -> None:
    tokens = tokenize("count = count + other_count")
    assert tokens.count("count") == 3
    assert "other_count" in tokens
