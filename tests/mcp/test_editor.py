"""The language server's MCP side without the protocol: settings changes, messages shown once, its manager's
tools in a run's registry through the run assembly."""

from __future__ import annotations

import sys

from mcp_helpers import BROKEN

from lsp_agent.assembly import build_registry
from lsp_agent.config import Settings
from lsp_agent.mcp.editor import EditorMcp


async def test_settings_changes_reconfigure_and_problems_are_shown_once(
    http_notes_url, tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    shown: list[str] = []
    settings = Settings(
        permissions={"web__*": "allow", "web__crash": "deny"},
        mcp_servers={
            "web": {"url": http_notes_url},
            "broken": {"command": sys.executable, "args": [str(BROKEN)]},
        },
    )
    mcp = EditorMcp(shown.append, settings=lambda: settings, root=lambda: tmp_path)
    assert {row["name"]: row["state"] for row in mcp.status()} == {"web": "idle", "broken": "idle"}
    try:
        errors = await mcp.start(settings, tmp_path)
        assert len(errors) == 1 and "'broken'" in errors[0]
        assert (
            len(shown) == 1 and shown[0].startswith("lsp-agent MCP: ") and "missing NOTES_TOKEN" in shown[0]
        )

        registry, run_settings, errors = await build_registry(settings, mcp=mcp.manager)
        assert errors == []  # the failed server was reported by start() and is not retried at once
        assert registry.get("web__lookup_note").permission == "external"
        assert run_settings.permissions["web__lookup_note"] == "allow"
        assert run_settings.permissions["web__crash"] == "deny"
        assert "read_file" not in run_settings.permissions
        assert settings.permissions == {
            "web__*": "allow",
            "web__crash": "deny",
        }  # the server's own: unchanged

        await mcp.start(settings, tmp_path)
        assert len(shown) == 1  # the same problem is not shown on every run

        settings = Settings(mcp_servers={"web2": {"url": http_notes_url}, "bad": {"args": []}})
        errors = await mcp.start(settings, tmp_path)
        assert any("'bad'" in e and "needs a 'command'" in e for e in errors)
        assert {row["name"]: row["state"] for row in mcp.status()} == {"web2": "ready"}
        registry, _, _ = await build_registry(settings, mcp=mcp.manager)
        names = registry.names()
        assert "web2__add" in names and not any(n.startswith(("web__", "broken__")) for n in names)
        assert len(shown) == 2 and "'bad'" in shown[1]
    finally:
        mcp.close()
    assert {row["state"] for row in mcp.status()} == {"stopped"}
