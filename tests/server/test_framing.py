"""MessageFramer: bodies come out whole whatever the read boundaries; oversized bodies are skipped, not held;
garbage and wrong lengths resynchronise at the next header."""

from __future__ import annotations

import json

from lsp_agent.server.framing import FramingError, MessageFramer, sniff_request_id


def frame(body: bytes, length: int | None = None, headers: bytes = b"") -> bytes:
    return headers + b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def feed_all(framer: MessageFramer, data: bytes, step: int) -> list:
    out: list = []
    for i in range(0, len(data), step):
        out.extend(framer.feed(data[i : i + step]))
    return out


def test_bodies_come_out_whole_at_any_read_boundary():
    bodies = [b'{"a": 1}', json.dumps({"text": "\u00e9\r\n" * 50}).encode(), b"{}"]
    stream = frame(bodies[0]) + frame(bodies[1], headers=b"Content-Type: application/vscode-jsonrpc\r\n")
    stream += b"content-length:2\r\n\r\n{}"  # header names are case-insensitive
    for step in (1, 3, 7, 64, len(stream)):
        assert feed_all(MessageFramer(), stream, step) == bodies


def test_an_oversized_body_is_skipped_with_its_id_and_never_buffered():
    framer = MessageFramer(max_bytes=1000)
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": "' + b"y" * 5000 + b'"}'
    out = feed_all(framer, frame(body) + frame(b'{"id": 8}'), 100)
    assert isinstance(out[0], FramingError) and out[0].request_id == 7 and "1000 bytes limit" in out[0].reason
    assert out[1:] == [b'{"id": 8}']
    assert len(framer._buf) == 0 and len(framer._sniff) <= 1024


def test_a_lying_huge_length_stops_at_the_next_header():
    framer = MessageFramer()
    out = framer.feed(frame(b'{"jsonrpc":"2.0","id":"a","method":"m"}', length=10**12) + frame(b"{}"))
    assert isinstance(out[0], FramingError) and out[0].request_id == "a"
    assert out[1:] == [b"{}"]


def test_garbage_between_messages_is_dropped():
    framer = MessageFramer()
    stream = b"\x00garbage\r\n\r\n" + b"noise" * 3000 + frame(b"[1]") + b"junk" + frame(b"[2]")
    assert feed_all(framer, stream, 512) == [b"[1]", b"[2]"]


def test_an_overstated_length_is_cut_at_the_next_header():
    framer = MessageFramer()
    assert framer.feed(frame(b'{"id": 1}', length=500) + frame(b'{"id": 2}')) == [b'{"id": 1}', b'{"id": 2}']


def test_request_ids_are_sniffed_only_at_the_front():
    assert sniff_request_id(b'{"jsonrpc":"2.0","id":12,"method":"x"') == 12
    assert sniff_request_id(b'{"method": "x", "id": "ab\\"c"') == 'ab"c'
    assert sniff_request_id(b'{"jsonrpc":"2.0","method":"didOpen","params":{"id":3}') is None
