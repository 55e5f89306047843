"""LineDocument applies incremental changes exactly as pygls' TextDocument does (thousands of random edits,
multi-line ranges, CR LF, astral characters), and the server uses it for open documents."""

from __future__ import annotations

import random

from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument

from lsp_agent.server.documents import LineDocument, LineWorkspace

PIECES = ["a", "bc", "\n", "\r\n", "\r", "😋", "é", "def f():\n    return 1\n", "", "  ", "\u2028", "x\ny\nz"]


def _random_change(rng: random.Random, lines: tuple[str, ...]) -> types.TextDocumentContentChangePartial:
    """A change over a random valid range (in UTF-16 units), sometimes past the end."""
    codec = PositionCodec()

    def position() -> types.Position:
        line = rng.randrange(len(lines) + 1) if lines else 0
        if line >= len(lines):
            return types.Position(line=line, character=0)
        units = codec.client_num_units(lines[line].rstrip("\r\n"))
        return types.Position(line=line, character=rng.randint(0, units))

    start, end = sorted([position(), position()], key=lambda p: (p.line, p.character))
    text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
    return types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=text)


def test_random_incremental_changes_match_pygls():
    rng = random.Random(1234)
    for round_ in range(60):
        initial = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        reference = TextDocument("file:///r.py", initial)
        ours = LineDocument("file:///r.py", initial)
        for step in range(120):
            change = _random_change(rng, reference.lines)
            reference.apply_change(change)
            ours.apply_change(change)
            if step % 7 == 0:  # read in between sometimes (the caches must follow later changes)
                assert ours.source == reference.source, (round_, step)
            assert ours.lines == reference.lines, (round_, step, change)
        assert ours.source == reference.source


def test_full_changes_and_offsets_match_pygls():
    reference, ours = TextDocument("file:///r.py", "a\nb\n"), LineDocument("file:///r.py", "a\nb\n")
    full = types.TextDocumentContentChangeWholeDocument(text="x = '😋'\r\ny = 2\n")
    for doc in (reference, ours):
        doc.apply_change(full)
    position = types.Position(line=0, character=6)
    assert ours.lines == reference.lines and ours.source == reference.source
    assert ours.offset_at_position(position) == reference.offset_at_position(position)
    assert ours.word_at_position(types.Position(line=1, character=0)) == "y"


def test_the_workspace_creates_line_documents():
    workspace = LineWorkspace(None)
    workspace.put_text_document(
        types.TextDocumentItem(uri="file:///w.py", language_id="python", version=1, text="a\n")
    )
    assert isinstance(workspace.get_text_document("file:///w.py"), LineDocument)
