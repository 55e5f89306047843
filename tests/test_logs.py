"""The log hides secrets at every level: the values the secret redaction knows and credential shapes, in the
messages of our loggers and of openai's client, in arguments and tracebacks; `lsp-agent ask --log-level DEBUG`
writes the prompt and the requests without the user's keys."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.logs import setup_logging
from lsp_agent.testing.scripted_model import ScriptedModelServer

ENV_TOKEN = "tok-zyxwvutsrq987654"
FLAG_KEY = "sk-flagkey-0011223344556677"
ENV_KEY = "sk-envkey-abcdef0123456789"
DOTENV_PASSWORD = "pw-93kd9xq27mzl"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """setup_logging at DEBUG into a file; the root logger's handlers and level restored afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    path = tmp_path / "debug.log"
    setup_logging("DEBUG", str(path))
    yield path
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_debug_records_of_every_logger_are_written_without_secrets(log_file: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_TOKEN)
    options = {
        "json_data": {"messages": [{"role": "user", "content": f"my token is {ENV_TOKEN}, fix it"}]},
        "api_key": "k3y-not-in-any-variable",
    }
    logging.getLogger("openai._base_client").debug("Request options: %s", options)
    # (once imported, openai's own filter hides an Authorization header of its records; ours hides it anywhere)
    logging.getLogger("lsp_agent.agent.model.client").debug(
        "headers %s", {"Authorization": "Bearer abcdefgh12345678"}
    )
    logging.getLogger("lsp_agent.agent.loop.run").debug(
        "connecting to %s", "postgresql://team:hunter2x@db/code"
    )
    logging.getLogger("lsp_agent.x").info("key %s and github ghp_%s", "sk-proj-" + "a" * 24, "b" * 36)
    try:
        raise RuntimeError(f"refused token={ENV_TOKEN[::-1]}")
    except RuntimeError:
        logging.getLogger("lsp_agent.y").exception("failed with password: %s", "correct-horse-battery")
    logging.getLogger("lsp_agent.z").debug("max_tokens=2048 token budget 500 basic checks passed")
    text = log_file.read_text()
    for secret in (ENV_TOKEN, "k3y-not-in-any-variable", "abcdefgh12345678", "hunter2x", "a" * 24, "b" * 36):
        assert secret not in text, secret
    assert ENV_TOKEN[::-1] not in text and "correct-horse-battery" not in text
    assert "my token is [REDACTED:MY_SERVICE_TOKEN], fix it" in text
    assert "'api_key': '[REDACTED]'" in text and "'Bearer [REDACTED]'" in text
    assert "postgresql://team:[REDACTED]@db/code" in text and "Traceback" in text
    assert "max_tokens=2048 token budget 500 basic checks passed" in text  # ordinary words stay


def test_ask_at_debug_logs_its_requests_without_the_users_keys(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / ".env").write_text(f"DB_PASSWORD={DOTENV_PASSWORD}\n")
    log = tmp_path / "ask.log"
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
        {"tool_calls": [{"name": "task_complete", "arguments": {"summary": "done"}}]},
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env.update(OPENAI_API_KEY=ENV_KEY, MY_SERVICE_TOKEN=ENV_TOKEN, LITELLM_LOCAL_MODEL_COST_MAP="True")
    task = f"my token is {ENV_TOKEN}, my key {FLAG_KEY}, the db password {DOTENV_PASSWORD}: what is in a.py?"
    with ScriptedModelServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "ask", task, "--repo", str(root), "--model", "openai/scripted",
             "--api-base", server.base_url, "--api-key", FLAG_KEY, "--log-level", "DEBUG", "--log-file", str(log)],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert "request messages (last two)" in text and "openai._base_client: Request options" in text
    for secret in (ENV_TOKEN, FLAG_KEY, ENV_KEY, DOTENV_PASSWORD):
        assert secret not in text, secret
    assert "my token is [REDACTED:MY_SERVICE_TOKEN], my key [REDACTED:apiKey]" in text
    assert "the db password [REDACTED:DB_PASSWORD]" in text  # a value of the workspace's .env
