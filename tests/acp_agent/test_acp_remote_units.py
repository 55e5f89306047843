"""--listen's address rules and token policy, and the connection checks, without a network."""

from __future__ import annotations

import argparse

import pytest

from lsp_agent.acp.remote import ListenAddress, parse_listen, refusal, token_for


@pytest.mark.parametrize(
    ("text", "host", "port", "loopback"),
    [
        ("127.0.0.1:8765", "127.0.0.1", 8765, True),
        ("localhost:0", "localhost", 0, True),
        ("[::1]:9000", "::1", 9000, True),
        ("8765", "127.0.0.1", 8765, True),
        ("0.0.0.0:8765", "0.0.0.0", 8765, False),
        ("[::]:8765", "::", 8765, False),
        ("10.1.2.3:80", "10.1.2.3", 80, False),
        ("devbox.example:80", "devbox.example", 80, False),  # a name may resolve anywhere
    ],
)
def test_listen_addresses(text: str, host: str, port: int, loopback: bool) -> None:
    address = parse_listen(text)
    assert (address.host, address.port, address.loopback) == (host, port, loopback)


@pytest.mark.parametrize("text", ["127.0.0.1:", "127.0.0.1:http", "host:70000", ""])
def test_bad_listen_addresses_say_what_to_give(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_listen(text)


def args(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(token=kw.get("token"), require_token=kw.get("require_token", False))


def test_token_policy(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LSP_AGENT_ACP_TOKEN", raising=False)
    loopback, everyone = ListenAddress("127.0.0.1", 0), ListenAddress("0.0.0.0", 0)
    assert token_for(loopback, args()) is None
    assert token_for(loopback, args(token="t")) == "t"  # a token given is always in force
    generated = token_for(everyone, args())
    assert generated and len(generated) >= 32
    assert capsys.readouterr().err.count(generated) == 1  # printed once, to stderr
    assert token_for(loopback, args(require_token=True)) not in (None, generated)
    monkeypatch.setenv("LSP_AGENT_ACP_TOKEN", "from-env")
    assert token_for(everyone, args()) == "from-env"
    assert "from-env" not in capsys.readouterr().err


def scope(path: str = "/acp", **headers: str) -> dict:
    return {
        "type": "websocket",
        "path": path,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }


def test_connection_checks() -> None:
    assert refusal(scope(), None) is None
    assert refusal(scope(), "tok")[0] == 401
    assert refusal(scope(authorization="Bearer tok"), "tok") is None
    assert refusal(scope(authorization="bearer  tok "), "tok") is None
    assert refusal(scope(authorization="Bearer tok2"), "tok")[0] == 401
    assert refusal(scope(authorization="Basic tok"), "tok")[0] == 401
    assert refusal(scope(origin="http://localhost:3000"), None)[0] == 403
    assert refusal(scope("/other"), None)[0] == 404
