"""Per-ask choices through the real protocol: a model override, the folder of an ask without a file in a
multi-root workspace, and a budget stop whose message reaches the editor with the running spend in the progress."""

from __future__ import annotations

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

pytestmark = pytest.mark.asyncio(loop_scope="module")


def finish(summary: str, **extra: object) -> dict:
    return {
        "content": "",
        "tool_calls": [{"name": "task_complete", "arguments": {"summary": summary}}],
        **extra,
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    base = tmp_path_factory.mktemp("ws")
    root = write_tree(base / "app", {"main.py": "print('app')\n"})
    write_tree(base / "lib", {"lib.py": "X = 1\n"})
    settings = scripted_settings(model, models=["openai/scripted-large", "openai/scripted-small"])
    ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": settings})
    yield ed
    await stop_editor(ed)


async def test_status_lists_the_models_and_an_ask_can_pick_one(editor, model):
    status = await editor.command("lspAgent.status")
    assert status["model"] == "openai/scripted"
    assert status["models"] == ["openai/scripted", "openai/scripted-large", "openai/scripted-small"]
    model.add_steps([finish("picked")])
    run_id = await editor.ask("which model?", model="openai/scripted-small")
    start = await editor.wait_event(run_id, "start")
    await editor.wait_event(run_id, "done")
    assert start["model"] == "openai/scripted-small"
    assert model.requests[-1]["model"] == "scripted-small"
    with pytest.raises(JsonRpcException, match="'model' must be a litellm model string"):
        await editor.ask("bad model", model="  ")


async def test_an_ask_without_a_file_goes_to_the_folder_named_or_is_refused_with_the_list(editor, model):
    lib = editor.root.parent / "lib"
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=from_fs_path(str(lib)), name="lib")], removed=[]
            )
        )
    )
    with pytest.raises(JsonRpcException, match=r"this workspace has 2 folders .* pass 'folder'") as caught:
        await editor.ask("where am I?")
    assert str(lib) in str(caught.value) and str(editor.root) in str(caught.value)
    model.add_steps([finish("in lib")])
    run_id = await editor.ask("where am I?", folder=from_fs_path(str(lib)))
    start = await editor.wait_event(run_id, "start")
    await editor.wait_event(run_id, "done")
    assert start["root"] == str(lib)
    with pytest.raises(JsonRpcException, match="is not a workspace folder"):
        await editor.ask("where?", folder=str(editor.root.parent))
    model.add_steps([finish("in app")])
    by_file = await editor.ask("and here?", uri=editor.uri("main.py"))  # a file picks its own folder
    assert (await editor.wait_event(by_file, "start"))["root"] == str(editor.root)
    await editor.wait_event(by_file, "done")


async def test_a_budget_stop_names_the_limit_and_the_progress_shows_the_running_spend(editor, model):
    await editor.command("lspAgent.status")
    step = {
        "content": "looking",
        "tool_calls": [{"name": "list_files", "arguments": {}}],
        "usage": {"prompt_tokens": 700, "completion_tokens": 100},
    }
    model.add_steps([step, step, finish("never")])
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": scripted_settings(model, tokenBudget=1000)})
    )
    for _ in range(50):
        if (await editor.command("lspAgent.status")).get("models") == ["openai/scripted"]:
            break
    run_id = await editor.ask("spend", uri=editor.uri("main.py"))
    done = await editor.wait_event(run_id, "done")
    assert done["stopReason"] == "token_budget"
    assert done["error"].startswith("token budget of 1,000 tokens per run reached (1,600 used)")
    reports = [
        p.message
        for p in editor.client.progress_reports[f"lsp-agent/run/{run_id}"]
        if isinstance(p, types.WorkDoneProgressReport)
    ]
    assert any(m and m.endswith("| 800 tokens, $0.0000") for m in reports), reports
