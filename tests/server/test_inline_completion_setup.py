"""Inline completions end quietly when they cannot be had: a model server that is down is said once (not per
keystroke), a model that takes no fill-in-the-middle prompt is said once and never asked, and `off` is silent."""

from __future__ import annotations

import asyncio
import socket

import pytest
from lsprotocol import types
from server_editor import start_editor, stop_editor, write_tree

pytestmark = pytest.mark.asyncio(loop_scope="module")


def params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def keystrokes(editor, uri: str, count: int) -> list:
    """Type `count` characters, asking for a completion after each; the answers."""
    answers = []
    text = "def f():\n    return "
    for i in range(count):
        text += "x"
        editor.change(uri, text + "\n")
        result = await editor.client.text_document_inline_completion_async(
            params(uri, 1, len("    return ") + i + 1)
        )
        answers.append(result.items if result else [])
    return answers


async def test_a_model_server_that_is_down_is_said_once_and_no_keystroke_gets_an_error(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("ws") / "app", {"main.py": "\n"})
    settings = {
        "model": "openai/qwen2.5-coder-1.5b",
        "apiBase": f"http://127.0.0.1:{closed_port()}/v1",
        "completionDebounceMs": 0,
    }
    editor = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    try:
        uri = editor.open("main.py", "def f():\n    return \n")
        assert await keystrokes(editor, uri, 6) == [[]] * 6
        said = [m.message for m in editor.client.messages if "inline completions paused" in m.message]
        assert len(said) == 1 and settings["apiBase"] in said[0]
        status = await editor.command("lspAgent.status")
        assert status["completion"]["failures"] == 1  # the server rests after a failure: one request, not six
    finally:
        await stop_editor(editor)


async def test_a_chat_model_gets_no_completion_requests_and_is_said_once(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "app", {"main.py": "\n"})
    settings = {"model": "openai/gpt-4o-mini", "apiBase": model.base_url, "inlineCompletion": "on"}
    editor = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    try:
        uri = editor.open("main.py", "def f():\n    return \n")
        asked = len(model.requests)
        assert await keystrokes(editor, uri, 3) == [[]] * 3
        assert len(model.requests) == asked
        said = [m for m in editor.client.messages if "not known as a fill-in-the-middle model" in m.message]
        assert len(said) == 1 and said[0].type == types.MessageType.Warning
        status = await editor.command("lspAgent.status")
        assert status["completion"]["enabled"] is False
    finally:
        await stop_editor(editor)


async def test_the_chat_fallback_asks_the_chat_model_when_opted_in(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "app", {"main.py": "\n"})
    settings = {
        "model": "openai/gpt-4o-mini",
        "apiBase": model.base_url,
        "apiKey": "test",
        "completionChatFallback": True,
        "completionDebounceMs": 0,
    }
    editor = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    try:
        uri = editor.open("main.py", "def double(n):\n    return \n")
        model.add_steps([{"content": "```python\nn * 2\n```"}])
        result = await editor.client.text_document_inline_completion_async(params(uri, 1, len("    return ")))
        assert [item.insert_text for item in result.items] == ["n * 2"]
        user = model.requests[-1]["messages"][-1]["content"]
        assert "def double(n):\n    return <CURSOR>\n" in user
    finally:
        await stop_editor(editor)


async def test_a_burst_of_keystrokes_within_the_debounce_asks_the_model_once(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "app", {"main.py": "\n"})
    settings = {
        "model": "openai/qwen2.5-coder-1.5b",
        "apiBase": model.base_url,
        "apiKey": "test",
        "completionDebounceMs": 300,
    }
    editor = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    try:
        uri = editor.open("main.py", "def f():\n    return \n")
        model.add_steps([{"content": "ult"}])
        asked = len(model.requests)
        pending = []
        text = "def f():\n    return "
        for char in "res":
            text += char
            editor.change(uri, text + "\n")
            request = params(uri, 1, len(text) - len("def f():\n"))
            pending.append(
                asyncio.ensure_future(editor.client.text_document_inline_completion_async(request))
            )
            await asyncio.sleep(0.03)
        answers = [result.items if result else [] for result in await asyncio.gather(*pending)]
        assert [[item.insert_text for item in items] for items in answers] == [[], [], ["ult"]]
        assert len(model.requests) == asked + 1
        assert model.requests[-1]["prompt"].endswith("    return res<|fim_suffix|>\n<|fim_middle|>")
    finally:
        await stop_editor(editor)
