"""Suggestions shown lately, so that typing through one answers with the rest of it and asks the model nothing."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

MAX_ENTRIES = 32


@dataclass(frozen=True)
class CachedSuggestion:
    """The suggestion the model gave with the file's text before and after the cursor at the time."""

    key: str  # the document (a URI or path)
    before: str
    after: str
    text: str


class SuggestionCache:
    """The last suggestions by document; a lookup finds one the user has since typed a prefix of."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, int], CachedSuggestion] = OrderedDict()

    def put(self, key: str, before: str, after: str, text: str) -> None:
        """Remember a suggestion shown at this position."""
        slot = (key, len(before))
        self._entries[slot] = CachedSuggestion(key, before, after, text)
        self._entries.move_to_end(slot)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)

    def lookup(self, key: str, before: str, after: str) -> str | None:
        """The rest of a suggestion the text before the cursor has typed into (None when there is none).

        The text after the cursor must be what it was, or that with characters the editor inserted at the cursor
        (an auto-closed bracket); the caller trims those again as it does any suggestion."""
        for entry in reversed(self._entries.values()):
            if entry.key != key or len(before) < len(entry.before) or not after.endswith(entry.after):
                continue
            if len(after) - len(entry.after) > 2 or not before.startswith(entry.before):
                continue
            typed = before[len(entry.before) :]
            if entry.text.startswith(typed) and len(typed) < len(entry.text):
                return entry.text[len(typed) :]
        return None

    def forget(self, key: str) -> None:
        """Drop a document's suggestions (it was closed)."""
        for slot in [s for s in self._entries if s[0] == key]:
            del self._entries[slot]
