"""A lone surrogate in an editor buffer (a JSON "\\ud800" escape) is indexed as U+FFFD: no traceback, and later
updates of the same buffer keep reaching the index."""

from __future__ import annotations

import time

from raw_wire import RawServer
from server_editor import write_tree

FILES = {
    "shop/cart.py": "class Cart:\n    def total(self):\n        return 0\n",
    "shop/payment.py": "def charge_card(card, amount):\n    return card.charge(amount)\n",
    "shop/notes.py": "def shipping_rates():\n    return {}\n",
}


def test_storable_replaces_only_lone_surrogates():
    from lsp_agent.index.store import storable

    assert storable("plain") == "plain" and storable(None) is None
    assert storable("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"
    assert storable("a\ud800b\udcffc") == "a\ufffdb\ufffdc"


def _search(server: RawServer, query: str) -> list[dict]:
    reply = server.request(
        "workspace/executeCommand", {"command": "lspAgent.search", "arguments": [{"query": query, "topK": 3}]}
    )
    return reply["result"]


def _wait_for_hit(server: RawServer, query: str, path: str) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        hits = [h for h in _search(server, query) if h["path"] == path]
        if hits:
            return hits[0]
        time.sleep(0.1)
    raise AssertionError(f"{query!r} never reached the index for {path}")


def test_a_lone_surrogate_in_a_buffer_is_indexed_without_a_traceback(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    server = RawServer(tmp_path / "cache")
    try:
        server.initialize(root)
        deadline = time.monotonic() + 30
        while not server.request("workspace/executeCommand", {"command": "lspAgent.status", "arguments": []})[
            "result"
        ]["index"]["ready"]:
            assert time.monotonic() < deadline, "the index never got ready"
            time.sleep(0.1)
        uri = (root / "shop/cart.py").as_uri()
        text = 'class Cart:\n    def voucher_discount(self):\n        return "\ud800 broken"\n'
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        hit = _wait_for_hit(server, "voucher_discount", "shop/cart.py")
        assert "\ufffd broken" in hit["text"] or "\ud800 broken" in hit["text"]
        changed = text.replace("voucher_discount", "loyalty_points") + "# \udcff\n"
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": changed}],
            },
        )
        _wait_for_hit(server, "loyalty_points", "shop/cart.py")  # the next flush went through too
        server.still_answers()
        log = "".join(server.stderr)
        assert "Traceback" not in log and "UnicodeEncodeError" not in log, log
    finally:
        server.close()
