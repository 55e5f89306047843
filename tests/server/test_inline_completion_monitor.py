"""Monitor-guided decoding through the real protocol: a suggestion's `self.x` or `module.x` that the workspace does
not define is asked again under a grammar of the names that exist, and the suggestion continued from the member
the model picks; receivers whose members the workspace cannot vouch for are left alone; a server that refuses or
ignores the grammar turns the monitor off quietly; a cancel or an edit ends the extra requests too."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
import pytest_asyncio
from lsprotocol import types
from server_editor import start_editor, stop_editor, write_tree
from test_inline_completion import until

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

LOADER = '''"""Settings files."""


class Loader:
    """Reads settings files under a root."""

    def __init__(self, root):
        self.root = root

    def load_config(self, path):
        return self.root / path


def load_defaults():
    return {}
'''
APP = """from threading import Thread

import config_loader
from config_loader import Loader


class App(Loader):
    def start(self, path):
        settings = \n

class Worker(Thread):
    def start(self, path):
        settings = \n

def handle(client):
    rows = \n

def report(loader: Loader, title: str):
    rows = \n"""
SETTINGS = {"model": "openai/qwen2.5-coder-1.5b", "apiKey": "test", "completionDebounceMs": 0}
APP_LINE, WORKER_LINE, HANDLE_LINE, REPORT_LINE = 8, 13, 17, 21
COLUMN = len("        settings = ")
asked = 0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop", {"config_loader.py": LOADER, "app.py": APP})
    ed = await start_editor(
        root,
        tmp_path_factory.mktemp("cache"),
        init_options={"lspAgent": {**SETTINGS, "apiBase": model.base_url}},
    )
    await ed.wait_index_ready()
    ed.open("app.py", APP)
    yield ed
    await stop_editor(ed)


def params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


async def complete(editor, line: int, character: int = COLUMN, text: str = APP) -> list[str]:
    """Ask at a position of `text` (made unique, so that no suggestion comes from the cache)."""
    global asked
    asked += 1
    uri = editor.uri("app.py")
    editor.change(uri, f"{text}# request {asked}\n")
    result = await editor.client.text_document_inline_completion_async(params(uri, line, character))
    items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
    return [item.insert_text for item in items]


def choices(body: dict) -> set[str]:
    """The strings a request's grammar allows."""
    return {json.loads(s) for s in re.findall(r'"(?:\\.|[^"\\])*"', body["grammar"].split("::=", 1)[1])}


async def test_a_method_the_class_does_not_have_is_replaced_by_the_one_the_model_rates_best(editor, model):
    model.add_steps(
        [{"content": "self.parse_config(path)\n"}, {"content": "parse_config"}, {"content": "(path)\n"}]
    )
    before = len(model.requests)
    assert await complete(editor, APP_LINE) == ["self.load_config(path)"]
    first, constrained, rest = model.requests[before:]
    assert "grammar" not in first and "grammar" not in rest
    # the class's and its workspace base's methods and attributes, nothing else
    assert choices(constrained) == {"start", "load_config", "root"}
    assert constrained["prompt"] == first["prompt"] + "self."
    assert rest["prompt"] == first["prompt"] + "self.load_config"
    status = (await editor.command("lspAgent.status"))["completion"]
    assert status["monitorCorrected"] >= 1 and status["monitorMs"]


async def test_a_rest_that_lengthens_the_chosen_member_gets_the_name_ended_first(editor, model):
    model.add_steps(
        [
            {"content": "self.parse_config(path)\n"},
            {"content": "load_config"},
            {"content": "_now(path)\n"},  # load_config_now: not a member either
            {"content": "("},  # under the grammar of one character that ends a name
            {"content": "path)\n"},
        ]
    )
    before = len(model.requests)
    assert await complete(editor, APP_LINE) == ["self.load_config(path)"]
    first, _, _, name_end, rest = model.requests[before:]
    assert name_end["grammar"] == "root ::= [^a-zA-Z0-9_]" and name_end["prompt"].endswith("self.load_config")
    assert rest["prompt"] == first["prompt"] + "self.load_config("


async def test_a_name_an_imported_workspace_module_lacks_is_corrected_and_one_it_has_is_not(editor, model):
    model.add_steps(
        [{"content": "config_loader.read_defaults()\n"}, {"content": "read_defaults"}, {"content": "()\n"}]
    )
    before = len(model.requests)
    assert await complete(editor, APP_LINE) == ["config_loader.load_defaults()"]
    assert choices(model.requests[before + 1]) == {"Loader", "load_defaults"}
    model.add_steps([{"content": "config_loader.load_defaults()\n"}])
    before = len(model.requests)
    assert await complete(editor, APP_LINE) == ["config_loader.load_defaults()"]
    assert len(model.requests) == before + 1  # nothing to correct: no extra request


async def test_a_parameter_annotated_with_a_workspace_class_or_a_builtin_type_is_checked(editor, model):
    model.add_steps(
        [{"content": "loader.parse_config(title)\n"}, {"content": "parse_config"}, {"content": "(title)\n"}]
    )
    before = len(model.requests)
    assert await complete(editor, REPORT_LINE, len("    rows = ")) == ["loader.load_config(title)"]
    assert choices(model.requests[before + 1]) == {"load_config", "root"}
    model.add_steps([{"content": "title.uppercase()\n"}, {"content": "uppercase"}, {"content": "()\n"}])
    before = len(model.requests)
    assert await complete(editor, REPORT_LINE, len("    rows = ")) == ["title.upper()"]
    assert {"upper", "split", "startswith"} <= choices(model.requests[before + 1])


async def test_an_external_base_an_unknown_receiver_and_a_new_attribute_are_left_alone(editor, model):
    model.add_steps(
        [
            {"content": "self.parse_config(path)\n"},  # Worker's base is threading.Thread: members unknown
            {"content": "client.fetch_all()\n"},  # a parameter: its type is unknown
            {"content": "self.cache = {}\n"},  # a new attribute, assigned
        ]
    )
    before = len(model.requests)
    assert await complete(editor, WORKER_LINE) == ["self.parse_config(path)"]
    assert await complete(editor, HANDLE_LINE, len("    rows = ")) == ["client.fetch_all()"]
    assert await complete(editor, APP_LINE, 8, APP.replace("settings = \n", "\n", 1)) == ["self.cache = {}"]
    assert len(model.requests) == before + 3 and not any("grammar" in b for b in model.requests[before:])


async def test_a_cancel_or_an_edit_during_the_extra_requests_ends_them(editor, model):
    uri = editor.uri("app.py")
    editor.change(uri, APP + "# cancelled\n")
    model.add_steps(
        [
            {"content": "self.parse_config(path)\n"},
            {"content": "load_config"},
            {"content": "(" + "x" * 400 + ")\n", "chunk_delay": 0.1},  # the continuation: five seconds
        ]
    )
    sent_before, streams = len(model.requests), len(model.streams)
    future = asyncio.ensure_future(
        editor.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, APP_LINE, COLUMN), msg_id="mgd-1"
        )
    )
    await until(lambda: len(model.requests) == sent_before + 3)
    started = time.monotonic()
    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="mgd-1"))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(future, 5)
    await until(lambda: len(model.streams) >= streams + 3)
    sent, total = model.streams[-1]
    assert sent < total / 2 and time.monotonic() - started < 2
    # an edit while the constrained request is answered: no item, and the suggestion is not continued
    model.add_steps([{"content": "self.parse_config(path)\n"}, {"content": "load_config", "delay": 1.0}])
    sent_before = len(model.requests)
    pending = asyncio.ensure_future(complete(editor, APP_LINE))
    await until(lambda: len(model.requests) == sent_before + 2)
    editor.change(uri, APP.replace("settings = \n", "settings = s\n", 1))
    assert await asyncio.wait_for(pending, 5) == []
    await asyncio.sleep(1.5)
    assert len(model.requests) == sent_before + 2 and model.remaining == 0


@pytest.mark.parametrize("behaviour", ["reject", "ignore"])
async def test_a_server_without_grammars_turns_the_monitor_off_quietly(tmp_path_factory, behaviour):
    with ScriptedModelServer([], grammar=behaviour) as server:
        root = write_tree(tmp_path_factory.mktemp("ws") / "shop", {"config_loader.py": LOADER, "app.py": APP})
        settings = {**SETTINGS, "apiBase": server.base_url}
        ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
        try:
            await ed.wait_index_ready()
            ed.open("app.py", APP)
            ignored = [{"content": "zzz"}] if behaviour == "ignore" else []  # a refusal uses no step
            server.add_steps([{"content": "self.parse_config(path)\n"}, *ignored])
            assert await complete(ed, APP_LINE) == ["self.parse_config(path)"]  # kept as the model wrote it
            assert len(server.requests) == 2 and "grammar" in server.requests[1]
            server.add_steps([{"content": "self.parse_config(path)\n"}])
            assert await complete(ed, APP_LINE) == ["self.parse_config(path)"]
            assert len(server.requests) == 3  # the monitor is off for this model: no second try
            status = (await ed.command("lspAgent.status"))["completion"]
            assert status["failures"] == 0 and not status["modelDown"] and status["monitorCorrected"] == 0
            assert not [m for m in ed.client.messages if "grammar" in m.message or "paused" in m.message]
        finally:
            await stop_editor(ed)
