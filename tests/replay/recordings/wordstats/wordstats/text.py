"""Counting and picking words."""


def words(text: str) -> list[str]:
    """The words of a text, split on whitespace."""
    return text.split()


def word_count(text: str) -> int:
    """How many words the text has."""
    return len(words(text))


def longest_word(text: str) -> str:
    """The longest word (the first one on a tie); "" for a text without words."""
    best = ""
    for word in words(text):
        if len(word) < len(best):
            best = word
    return best
