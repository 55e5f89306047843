"""`lsp-agent serve --tcp HOST:PORT` speaks LSP over TCP; bad addresses get a usable error."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
import time

import pytest
from server_editor import REPO, server_env

from lsp_agent.cli.serve import parse_tcp


def test_parse_tcp_accepts_host_port_and_explains_bad_values():
    assert parse_tcp("127.0.0.1:2087") == ("127.0.0.1", 2087)
    assert parse_tcp(":2087") == ("127.0.0.1", 2087)
    assert parse_tcp("127.0.0.1:0") == ("127.0.0.1", 0)  # any free port
    for bad in ("2087", "localhost:http", "h:-1", "h:70000"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_tcp(bad)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read_message(sock_file) -> dict:  # noqa: ANN001
    length = 0
    while (line := sock_file.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sock_file.read(length))


def test_serve_over_tcp_answers_initialize(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", "--tcp", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=server_env(tmp_path),
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "server never listened"
                time.sleep(0.1)
        with sock, sock.makefile("rb") as reader:
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
                }
            ).encode()
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            reply = _read_message(reader)
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "lsp-agent"
        assert "lspAgent.ask" in reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
    finally:
        proc.kill()
        proc.wait()


def test_serve_rejects_a_bad_tcp_address():
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "serve", "--tcp", "nowhere"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "HOST:PORT" in proc.stderr


def test_port_zero_picks_a_free_port_and_prints_it(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", "--tcp", "127.0.0.1:0"],
        cwd=REPO,
        env=server_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("lsp-agent serve: listening on 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        assert port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock, sock.makefile("rb") as reader:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
            ).encode()
            sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            assert _read_message(reader)["result"]["serverInfo"]["name"] == "lsp-agent"
    finally:
        proc.kill()
        proc.wait()


def test_serve_started_by_hand_on_a_terminal_says_what_it_is(tmp_path):
    leader, follower = pty.openpty()  # stdin is a terminal, as when a user types `lsp-agent serve`
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve"],
        cwd=REPO,
        env=server_env(tmp_path),
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        hint = proc.stderr.readline()
        assert "language server" in hint and "started by an editor" in hint and "lsp-agent ask" in hint
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
        os.close(follower)


def test_serve_with_stdin_from_dev_null_ends_at_once(tmp_path):
    # /dev/null is a character device the event loop cannot wait on: read as a file, its end ends the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve"],
        cwd=REPO,
        env=server_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
