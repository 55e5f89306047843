"""textDocument/inlineCompletion through the real protocol against the scripted model's streamed /v1/completions:
repository context in Qwen2.5-Coder's format, block ends, suffix overlap, strings, the cache, cancellation."""

from __future__ import annotations

import asyncio
import time

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from server_editor import start_editor, stop_editor, write_tree

from lsp_agent.server.features import create_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

GEOMETRY = '''"""Shapes."""


class Shape:
    """A plane figure."""


def area_of(shape: Shape, unit: str = "m") -> float:
    """The area of a shape in square units."""
    width = shape.width
    height = shape.height
    scale = 1.0 if unit == "m" else 0.01
    total = width * height * scale
    return total
'''
SETTINGS = {
    "model": "openai/qwen2.5-coder-1.5b",
    "apiKey": "test",
    "completionDebounceMs": 0,
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop", {"geometry.py": GEOMETRY, "main.py": "\n"})
    settings = {**SETTINGS, "apiBase": model.base_url}
    ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    await ed.wait_index_ready()
    yield ed
    await stop_editor(ed)


def params(uri: str, line: int, character: int, invoked: bool = False) -> types.InlineCompletionParams:
    kind = (
        types.InlineCompletionTriggerKind.Invoked if invoked else types.InlineCompletionTriggerKind.Automatic
    )
    return types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=kind),
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


async def complete(editor, uri: str, line: int, character: int, invoked: bool = False) -> list[str]:
    result = await editor.client.text_document_inline_completion_async(params(uri, line, character, invoked))
    items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
    return [item.insert_text for item in items]


def set_text(editor, uri: str, text: str) -> None:
    if uri in editor.docs:
        editor.change(uri, text)
    else:
        editor.docs[uri] = (text, 1)
        editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )


def replace_line(editor, uri: str, line: int, text: str, whole: str) -> None:
    """An incremental didChange (version 2) replacing one line with `text`; `whole` is the document after it."""
    editor.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)), text=text
                )
            ],
        )
    )
    editor.docs[uri] = (whole, 2)


async def test_the_server_advertises_inline_completion():
    server = create_server()
    features = server.protocol.fm
    names = {*features.features, *features.builtin_features}
    caps = ServerCapabilitiesBuilder(
        types.ClientCapabilities(), names, features.feature_options, list(features.commands), None, None
    ).build()
    assert caps.inline_completion_provider == types.InlineCompletionOptions()


async def test_the_prompt_carries_the_other_files_definition_and_the_suffix_overlap_is_trimmed(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "from geometry import area_of\n\n\ndef report(shape):\n    total = area_of()\n")
    model.add_steps([{"content": 'shape, unit="cm")'}])
    before = len(model.requests)
    assert await complete(editor, uri, 4, len("    total = area_of(")) == ['shape, unit="cm"']
    body = model.requests[before]
    prompt = body["prompt"]
    assert prompt.startswith("<|repo_name|>shop\n")
    assert "<|file_sep|>geometry.py\n" in prompt
    assert (
        'def area_of(shape: Shape, unit: str = "m") -> float:\n    """The area of a shape in square units."""'
        in prompt
    )
    # the head (the definitions of what main.py imports) and the per-band pieces of geometry.py: two sections
    assert prompt.count("<|file_sep|>geometry.py") <= 2 and prompt.count("def area_of(") == 1
    assert prompt.endswith(
        "<|file_sep|>main.py\n<|fim_prefix|>from geometry import area_of\n\n\ndef report(shape):\n"
        "    total = area_of(<|fim_suffix|>)\n<|fim_middle|>"
    )
    assert body["stream"] is True and body["cache_prompt"] is True
    assert body["model"] == "qwen2.5-coder-1.5b" and "\n" in body["stop"]


async def test_a_multi_line_suggestion_stops_at_the_end_of_its_block(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def total(items):\n    \n\n\nprint(total([1]))\n")
    reply = "result = 0\n    for item in items:\n        result += item\n    return result\n\ndef other():\n    pass\n"
    model.add_steps([{"content": reply}])
    before = len(model.requests)
    assert await complete(editor, uri, 1, 4) == [
        "result = 0\n    for item in items:\n        result += item\n    return result"
    ]
    assert model.requests[before]["stop"][0] == "\n\n\n"


async def test_a_suggestion_that_runs_into_the_code_after_the_cursor_stops_there(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def pick(items):\n    \n    return chosen\n")
    model.add_steps([{"content": "chosen = items[0]\n    return chosen\n"}])
    assert await complete(editor, uri, 1, 4) == ["chosen = items[0]"]


async def test_inside_a_string_or_comment_only_an_invoked_request_gets_a_suggestion(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, 'greeting = "hello "\n# say hello \n')
    before = len(model.requests)
    assert await complete(editor, uri, 0, len('greeting = "hello ')) == []
    assert await complete(editor, uri, 1, len("# say hello ")) == []
    assert len(model.requests) == before  # the model was not asked
    model.add_steps([{"content": "world"}])
    assert await complete(editor, uri, 0, len('greeting = "hello '), invoked=True) == ["world"]


async def test_typing_through_a_suggestion_is_answered_from_the_cache(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def add(a, b):\n    return \n")
    model.add_steps([{"content": "a + b"}])
    assert await complete(editor, uri, 1, len("    return ")) == ["a + b"]
    asked = len(model.requests)
    set_text(editor, uri, "def add(a, b):\n    return a +\n")
    assert await complete(editor, uri, 1, len("    return a +")) == [" b"]
    assert len(model.requests) == asked  # no second request
    status = await editor.command("lspAgent.status")
    assert status["completion"]["cacheHits"] >= 1
    assert 0 < status["completion"]["modelMs"][-1] < 30_000  # the answered request's time, for the benchmark


async def test_cancel_request_closes_the_models_stream(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def slow():\n    return \n")
    model.add_steps([{"content": "x" * 400, "chunk_delay": 0.1}])  # 50 chunks: five seconds
    streams, asked = len(model.streams), len(model.requests)
    future = asyncio.ensure_future(
        editor.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, 1, len("    return ")), msg_id="slow-1"
        )
    )
    await until(lambda: len(model.requests) > asked)
    started = time.monotonic()
    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-1"))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(future, 5)
    await until(lambda: len(model.streams) > streams)
    sent, total = model.streams[-1]
    assert sent < total / 2 and time.monotonic() - started < 2  # the server stopped well before the end


async def test_a_keystroke_supersedes_the_request_in_flight_and_a_changed_document_gets_no_item(
    editor, model
):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def slow():\n    return \n")
    model.add_steps([{"content": "y" * 400, "chunk_delay": 0.1}])
    streams, asked = len(model.streams), len(model.requests)
    first = asyncio.ensure_future(complete(editor, uri, 1, len("    return ")))
    await until(lambda: len(model.requests) > asked)
    set_text(editor, uri, "def slow():\n    return N\n")  # the user typed: the suggestion in flight is stale
    assert await asyncio.wait_for(first, 5) == []
    await until(lambda: len(model.streams) > streams)
    assert model.streams[-1][0] < model.streams[-1][1] / 2


async def until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.02)


async def test_recent_edits_elsewhere_reach_the_prompt_and_secrets_do_not(editor, model):
    notes = editor.uri("notes.py")
    set_text(editor, notes, "".join(f"# line {i}\n" for i in range(20)))
    edited = "".join(f"# line {i}\n" for i in range(10)) + "RATE_LIMIT = 17  # edited just now\n"
    edited += "".join(f"# line {i}\n" for i in range(11, 20))
    replace_line(editor, notes, 10, "RATE_LIMIT = 17  # edited just now\n", edited)
    env = editor.root / ".env"
    env.write_text("SERVICE_TOKEN=tok-1234567890abcdef\n")
    uri = editor.uri("main.py")
    set_text(editor, uri, 'TOKEN = "tok-1234567890abcdef"\n\ndef limit():\n    return \n')
    model.add_steps([{"content": "RATE_LIMIT"}])
    before = len(model.requests)
    assert await complete(editor, uri, 3, len("    return ")) == ["RATE_LIMIT"]
    prompt = model.requests[before]["prompt"]
    assert "<|file_sep|>notes.py\n" in prompt and "RATE_LIMIT = 17  # edited just now" in prompt
    assert "tok-1234567890abcdef" not in prompt and "[REDACTED:SERVICE_TOKEN]" in prompt
    secret = editor.uri(".env")
    set_text(editor, secret, "SERVICE_TOKEN=tok-1234567890abcdef\nOTHER=\n")
    assert await complete(editor, secret, 1, len("OTHER="), invoked=True) == []
    assert len(model.requests) == before + 1  # a secret file is never sent


async def test_a_suggestion_continues_the_item_selected_in_the_completion_menu(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "import os\n\nfolder = os.pa\n")
    model.add_steps([{"content": ".join(folder, name)"}])
    before = len(model.requests)
    request = params(uri, 2, len("folder = os.pa"))
    request.context.selected_completion_info = types.SelectedCompletionInfo(
        range=types.Range(types.Position(2, len("folder = os.")), types.Position(2, len("folder = os.pa"))),
        text="path",
    )
    result = await editor.client.text_document_inline_completion_async(request)
    (item,) = result.items
    assert item.insert_text == "path.join(folder, name)"
    assert item.range == types.Range(
        types.Position(2, len("folder = os.")), types.Position(2, len("folder = os.pa"))
    )
    assert "folder = os.path<|fim_suffix|>" in model.requests[before]["prompt"]


async def test_the_empty_line_at_the_end_of_the_file_gets_a_suggestion(editor, model):
    uri = editor.uri("main.py")
    set_text(editor, uri, "def main():\n    run()\n\n\n")
    model.add_steps([{"content": 'if __name__ == "__main__":\n    main()\n'}])
    assert await complete(editor, uri, 4, 0) == ['if __name__ == "__main__":\n    main()']


async def test_closing_a_document_forgets_its_suggestions(editor, model):
    uri = editor.uri("closing.py")
    set_text(editor, uri, "def mul(a, b):\n    return \n")
    model.add_steps([{"content": "a * b"}])
    assert await complete(editor, uri, 1, len("    return ")) == ["a * b"]
    editor.close(uri)
    set_text(editor, uri, "def mul(a, b):\n    return a\n")
    model.add_steps([{"content": " * b"}])
    asked = len(model.requests)
    assert await complete(editor, uri, 1, len("    return a")) == [" * b"]
    assert len(model.requests) == asked + 1  # asked again: the closed document's cache is gone
