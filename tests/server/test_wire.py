"""Bad input thrown at `lsp-agent serve` as raw bytes: every request gets its exact JSON-RPC error, notifications
are never answered, and the server answers a normal request right after each case."""

from __future__ import annotations

import json

import pytest
from raw_wire import RawServer, frame
from server_editor import write_tree

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, NOT_INITIALIZED = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32002,
)
FILES = {"shop/payment.py": "def charge_card(card, amount):\n    return card.charge(amount)\n"}
CODE_ACTION = "textDocument/codeAction"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop", FILES)
    raw = RawServer(tmp_path_factory.mktemp("cache"))
    raw.initialize(root)
    yield raw
    raw.close()


def _error(reply: dict, code: int, msg_id: object) -> str:
    assert reply.get("id") == msg_id and "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]["message"]


def _code_action_params(uri: str) -> dict:
    point = {"line": 0, "character": 0}
    return {
        "textDocument": {"uri": uri},
        "range": {"start": point, "end": point},
        "context": {"diagnostics": []},
    }


def test_malformed_json_gets_a_parse_error_with_id_null(server):
    server.write(frame(b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"'))
    assert "not valid JSON" in _error(server.reply(), PARSE_ERROR, None)
    server.write(frame(b'{"jsonrpc": "2.0", "id": 2, "method": "\xff\xfe"}'))  # not UTF-8
    _error(server.reply(), PARSE_ERROR, None)
    server.still_answers()


@pytest.mark.parametrize(
    ("message", "expected_id", "says"),
    [
        ({"jsonrpc": "1.0", "id": 11, "method": "shutdown"}, 11, '"jsonrpc" must be "2.0"'),
        ({"id": 12, "method": "shutdown"}, 12, '"jsonrpc" must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 13, "method": 5}, 13, '"method" must be a non-empty string'),
        ({"jsonrpc": "2.0", "id": 14, "method": ""}, 14, '"method" must be a non-empty string'),
        ({"jsonrpc": "2.0", "id": 15, "params": {}}, 15, '"method" must be a non-empty string'),
        (
            {"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"},
            None,
            '"id" must be an integer or a string',
        ),
        ({"jsonrpc": "2.0", "id": True, "method": "shutdown"}, None, '"id" must be an integer or a string'),
        (
            {"jsonrpc": "2.0", "id": 16, "method": CODE_ACTION, "params": "uri"},
            16,
            '"params" must be an object',
        ),
        ({"jsonrpc": "2.0", "id": 17, "method": CODE_ACTION, "params": 42}, 17, '"params" must be an object'),
    ],
)
def test_invalid_requests_get_invalid_request(server, message, expected_id, says):
    server.send(message)
    assert says in _error(server.reply(), INVALID_REQUEST, expected_id)
    server.still_answers()


@pytest.mark.parametrize("payload", [42, "text", None, True])
def test_a_message_that_is_no_object_gets_invalid_request(server, payload):
    server.send(payload)
    assert "must be a JSON object" in _error(server.reply(), INVALID_REQUEST, None)
    server.still_answers()


def test_a_batch_array_is_refused_per_request_and_nothing_in_it_runs(server):
    server.send(
        [
            {"jsonrpc": "2.0", "id": 21, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
            {"jsonrpc": "2.0", "id": "22", "method": "workspace/executeCommand"},
        ]
    )
    first, second = server.reply(), server.reply()
    assert "batch" in _error(first, INVALID_REQUEST, 21)
    _error(second, INVALID_REQUEST, "22")
    server.send([])
    _error(server.reply(), INVALID_REQUEST, None)
    server.still_answers()  # neither shutdown nor exit ran


def test_params_that_do_not_deserialise_get_invalid_params_naming_the_field(server):
    uri = (server.root / "shop/payment.py").as_uri()
    server.send({"jsonrpc": "2.0", "id": 31, "method": CODE_ACTION, "params": [uri, 0, 0]})
    _error(server.reply(), INVALID_PARAMS, 31)
    bad = _code_action_params(uri)
    bad["range"]["start"] = {"line": "first", "character": 0}
    server.send({"jsonrpc": "2.0", "id": 32, "method": CODE_ACTION, "params": bad})
    message = _error(server.reply(), INVALID_PARAMS, 32)
    assert "textDocument/codeAction" in message and "range" in message
    server.send({"jsonrpc": "2.0", "id": 33, "method": CODE_ACTION, "params": {"textDocument": {"uri": uri}}})
    _error(server.reply(), INVALID_PARAMS, 33)
    server.send({"jsonrpc": "2.0", "id": 34, "method": CODE_ACTION})  # params left out
    _error(server.reply(), INVALID_PARAMS, 34)
    good = server.request(CODE_ACTION, _code_action_params(uri))
    assert good["result"] == []


def test_an_unknown_method_gets_method_not_found(server):
    server.send({"jsonrpc": "2.0", "id": 41, "method": "textDocument/noSuchThing", "params": {}})
    _error(server.reply(), METHOD_NOT_FOUND, 41)
    server.still_answers()


def test_bad_notifications_are_logged_never_answered(server):
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 7}})
    server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": "nope"})
    server.send({"jsonrpc": "1.0", "method": "initialized", "params": {}})
    server.send({"jsonrpc": "2.0", "method": "$/unknownNotification", "params": {}})
    server.send({"jsonrpc": "2.0", "id": 999_999, "result": {"unexpected": True}})  # a response nobody awaits
    closed = {"textDocument": {"uri": "file:///not/open.py", "version": 2}, "contentChanges": [{"text": "x"}]}
    server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": closed})  # its handler fails
    assert server.no_reply()
    server.still_answers()
    methods = [n["method"] for n in server.notifications]
    assert "window/showMessage" not in methods  # no pop-up for what the user cannot act on
    assert any(
        "notification failed" in n["params"]["message"]
        for n in server.notifications
        if n["method"] == "window/logMessage"
    )


def test_a_deeply_nested_message_gets_a_parse_error_and_no_traceback(server):
    server.write(frame(b"[" * 200_000 + b"]" * 200_000))  # json.loads raises RecursionError
    assert "nested too deeply" in _error(server.reply(), PARSE_ERROR, None)
    deep = b'{"jsonrpc": "2.0", "id": 71, "method": "shutdown", "params": ' + b'{"a":' * 100_000 + b"1"
    server.write(frame(deep + b"}" * 100_001))  # its id cannot be read either: id null
    assert "nested too deeply" in _error(server.reply(), PARSE_ERROR, None)
    server.still_answers()
    assert "RecursionError" not in "".join(server.stderr)  # answered, not logged as a crash


def test_a_huge_content_length_is_refused_without_allocating_it(server):
    body = json.dumps({"jsonrpc": "2.0", "id": 51, "method": "shutdown"}).encode()
    server.write(b"Content-Length: 1000000000000\r\n\r\n" + body)
    assert "exceeds" in _error(server.reply(), INVALID_REQUEST, 51)
    server.still_answers()  # the next header resynchronised the stream


def test_an_oversized_body_is_skipped_as_it_streams(server):
    text = "x" * (65 * 1024 * 1024)
    message = {"jsonrpc": "2.0", "id": 52, "method": "workspace/executeCommand", "params": {"command": text}}
    server.send(message)
    assert "64 MiB" in _error(server.reply(timeout=60), INVALID_REQUEST, 52)
    server.still_answers()


def test_garbage_and_a_wrong_length_are_resynchronised(server):
    server.write(b"hello there\r\n\r\n")  # a header block without Content-Length
    server.write(b"\x00\x01 noise {]")
    body = json.dumps({"jsonrpc": "2.0", "id": 61, "method": "textDocument/noSuchThing"}).encode()
    server.write(b"Content-Length: %d\r\n\r\n" % (len(body) + 500) + body)  # overstated length
    server.send({"jsonrpc": "2.0", "id": 62, "method": "textDocument/noSuchThingEither"})
    _error(server.reply(), METHOD_NOT_FOUND, 61)  # the next header cut the overstated body: it was handled
    _error(server.reply(), METHOD_NOT_FOUND, 62)
    server.still_answers()


def test_a_request_after_shutdown_is_refused_and_exit_still_works(tmp_path):
    raw = RawServer(tmp_path / "cache")
    try:
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
        assert "initialize" in _error(raw.reply(), NOT_INITIALIZED, 1)
        raw.notify("textDocument/didOpen", {"textDocument": {}})  # dropped before initialize
        assert raw.no_reply(0.3)
        raw.initialize(tmp_path)
        assert raw.request("shutdown")["result"] is None
        _error(
            raw.request(CODE_ACTION, _code_action_params(tmp_path.as_uri())), INVALID_REQUEST, raw._next_id
        )
        raw.notify("exit", None)
        assert raw.proc.wait(timeout=10) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()
