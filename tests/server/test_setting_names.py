"""Bad settings are named the way the user wrote them: lspAgent.<key> in the editor, the variable in env/.env."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.server.setting_names import editor_wording
from lsp_agent.settings_sources import load_settings


def test_bad_settings_are_named_as_the_user_wrote_them(tmp_path: Path):
    (tmp_path / ".env").write_text("LSP_AGENT_TOOL_CALLING=maybe\n")
    client = {"index": {"maxFileSize": "big"}, "nonsense": 1}
    _, errors = load_settings(tmp_path, client=client, environ={"LSP_AGENT_MAX_ITERATIONS": "x"})
    worded = sorted(editor_wording(e) for e in errors)
    assert worded == [
        "LSP_AGENT_MAX_ITERATIONS (in the environment) has a bad value 'x': expected a positive whole number; "
        "using the default",
        "LSP_AGENT_TOOL_CALLING (in the workspace .env) has a bad value 'maybe': expected one of auto, native, "
        "prompt; using the default",
        "setting lspAgent.index.maxFileSize has a bad value 'big': expected a positive whole number; using the "
        "default",
        "unknown setting lspAgent.nonsense",
    ]
