"""run_tests through the real language server: the sandbox runs the unsaved buffer the agent read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sandbox_helpers import CALC, TEST_CALC, snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from scripted_editor import tool_step  # noqa: E402
from server_editor import scripted_settings, start_editor, stop_editor, write_tree  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

FIXED_UNSAVED = "def add(a, b):\n    return a + b  # fixed, not saved yet\n"


@pytest.mark.asyncio
async def test_run_tests_sees_the_unsaved_buffer_the_agent_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # inherited by the server and its sandbox
    root = write_tree(
        tmp_path / "proj",
        {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/test_calc.py": TEST_CALC},
    )
    before = snapshot(root)
    with ScriptedModelServer([]) as model:
        settings = {
            **scripted_settings(model),
            "permissions": {"allow": ["run_tests"]},
        }
        editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": settings})
        try:
            editor.open("pkg/calc.py", FIXED_UNSAVED)
            model.add_steps(
                [
                    tool_step("read_file", path="pkg/calc.py"),
                    tool_step("run_tests", args=["-q"]),
                    tool_step("task_complete", summary="the tests pass"),
                ]
            )
            run_id = await editor.ask("do the tests pass?")
            done = await editor.wait_event(run_id, "done", timeout=90)
            results = {e["name"]: e for e in editor.run_events(run_id, "tool_result")}
            assert "fixed, not saved yet" in results["read_file"]["output"]
            assert results["run_tests"]["ok"], results["run_tests"]
            assert results["run_tests"]["output"].startswith("exit status: 0")  # disk: 1 failed
            assert done["pending"] is False  # reading a buffer proposes nothing
        finally:
            await stop_editor(editor)
    assert snapshot(root) == before
