"""Monitor-guided decoding and secret files, through the real protocol: a class or module in a file the user's
`secretFiles` covers never feeds a grammar, even while the index still lists the file (here: `lsp-agent index` run
in a terminal, which does not see the editor's settings); the same workspace without the rule is corrected."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
from lsprotocol import types
from server_editor import server_env, start_editor, stop_editor, write_tree
from test_inline_completion import until
from test_inline_completion_monitor import APP, APP_LINE, LOADER, REPORT_LINE, SETTINGS, choices, complete

pytestmark = pytest.mark.asyncio

# what config_loader.py alone defines or says: no request may carry any of it while the file is secret
SECRET_NAMES = ("load_config", "load_defaults", "self.root", "Reads settings files")
SUGGESTIONS = [  # (line, column, the model's suggestion): a method of the secret base, a module's, an annotation's
    (APP_LINE, len("        settings = "), "self.parse_config(path)"),
    (APP_LINE, len("        settings = "), "config_loader.read_defaults()"),
    (REPORT_LINE, len("    rows = "), "loader.parse_config(title)"),
]


def listed(cache, rel: str) -> bool:
    """Whether the workspace's index (in the server's cache) lists the file."""
    (db,) = cache.glob("lsp-agent/index/*.sqlite3")
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT 1 FROM files WHERE path = ?", (rel,)).fetchone() is not None


async def test_a_secret_file_feeds_no_grammar_while_the_index_still_lists_it(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop", {"config_loader.py": LOADER, "app.py": APP})
    cache = tmp_path_factory.mktemp("cache")
    settings = {**SETTINGS, "apiBase": model.base_url}
    editor = await start_editor(root, cache, init_options={"lspAgent": settings})
    try:
        await editor.wait_index_ready()
        editor.open("app.py", APP)
        # without the rule: the secret-to-be base class's members correct the suggestion
        model.add_steps(
            [{"content": "self.parse_config(path)\n"}, {"content": "load_config"}, {"content": "(p)\n"}]
        )
        before = len(model.requests)
        assert await complete(editor, APP_LINE) == ["self.load_config(p)"]
        assert choices(model.requests[before + 1]) == {"start", "load_config", "root"}

        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"lspAgent": {**settings, "secretFiles": ["config_loader.py"]}}
            )
        )
        await until(lambda: not listed(cache, "config_loader.py"), 30)  # the server's reindex leaves it out
        await editor.wait_index_ready()
        # a terminal's `lsp-agent index` (no editor settings) puts it back into the same index
        subprocess.run(
            [sys.executable, "-m", "lsp_agent", "index", str(root), "--no-progress"],
            env=server_env(cache),
            check=True,
            capture_output=True,
            timeout=120,
        )
        assert listed(cache, "config_loader.py")

        before = len(model.requests)
        for line, column, suggestion in SUGGESTIONS:
            model.add_steps([{"content": suggestion + "\n"}])
            assert await complete(editor, line, column) == [suggestion]  # kept as the model wrote it
        sent = model.requests[before:]
        assert len(sent) == len(SUGGESTIONS) and not any("grammar" in body for body in sent)
        bodies = json.dumps(sent)
        assert not [name for name in SECRET_NAMES if name in bodies]
        assert model.remaining == 0
    finally:
        await stop_editor(editor)
