"""Multi-root runs through the real protocol: a run reads another workspace folder when the ask asks for it
(`readFolders` or an `@name/...` mention), read-only: its edits to that folder are refused and its proposal holds
only files of its own folder."""

from __future__ import annotations

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLIENT = "def fetch(url):\n    return 'GET ' + url\n\n\nclass Client:\n    pass\n"


def step(tool: str, **arguments: object) -> dict:
    return {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]}


def tool_outputs(request: dict) -> list[str]:
    """The observations the model was sent, without their 'Observation from TOOL:' line."""
    texts = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    return [t.split("\n", 1)[1] if t.startswith("Observation from") else t for t in texts]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    base = tmp_path_factory.mktemp("ws")
    app = write_tree(base / "app", {"main.py": "from client import fetch\n"})
    api = write_tree(base / "api", {"pkg/client.py": CLIENT, ".env": "API_TOKEN=tok-9f8e7d6c5b\n"})
    (api / "pkg" / "config.py").write_text("TOKEN = 'tok-9f8e7d6c5b'\n")
    ed = await start_editor(
        app,
        tmp_path_factory.mktemp("cache"),
        init_options={"lspAgent": scripted_settings(model)},
        folders=[app, api],
    )
    yield ed
    await stop_editor(ed)


async def test_read_folders_opens_the_other_folder_read_only(editor, model):
    api = editor.root.parent / "api"
    await editor.wait_index_ready()  # both folders are indexed: find_symbol searches each
    model.add_steps(
        [
            step("read_file", path="@api/pkg/client.py"),
            step("search_text", pattern="TOKEN", path="@api"),
            step("find_symbol", name="fetch"),
            step("write_file", path="@api/pkg/extra.py", content="X = 1\n"),
            step("write_file", path="use_api.py", content="from client import Client\n"),
            step("task_complete", summary="used the api client"),
        ]
    )
    run_id = await editor.ask(
        "use the api client", folder=from_fs_path(str(editor.root)), readFolders=["api"]
    )
    done = await editor.wait_event(run_id, "done")
    assert done["stopReason"] == "complete", done

    context = [e for e in editor.run_events(run_id, "context") if e.get("what") == "folders"]
    assert context and context[0]["readable"] == {"api": str(api)}
    first = model.requests[-6]["messages"]
    assert any("Also open for reading, read-only: @api" in str(m["content"]) for m in first)
    outputs = tool_outputs(model.requests[-1])
    assert outputs[0].startswith("1: def fetch(url):")
    assert outputs[1] == "@api/pkg/config.py:1:TOKEN = '[REDACTED:API_TOKEN]'"  # the folder's own secrets
    assert outputs[2].startswith("In @app (this run's folder):\nNo definition of fetch in the index.")
    assert (
        "In @api (read-only):\nDefinitions of fetch (1):\n  @api/pkg/client.py:1-2 function fetch"
        in outputs[2]
    )
    assert "which this run may only read" in outputs[3] and "nothing was written" in outputs[3]
    assert outputs[4].startswith("Created use_api.py")

    (proposal,) = editor.run_events(run_id, "proposal")
    assert [c["path"] for c in proposal["changes"]] == ["use_api.py"]  # nothing of @api
    assert not (api / "pkg" / "extra.py").exists() and (api / "pkg" / "client.py").read_text() == CLIENT
    await editor.command("lspAgent.rejectEdits", {"runId": run_id})


async def test_a_mention_of_a_file_in_another_folder_attaches_it_and_opens_the_folder(editor, model):
    model.add_steps([step("list_files", path="@api/pkg"), step("task_complete", summary="explained")])
    run_id = await editor.ask("explain @api/pkg/client.py", folder=from_fs_path(str(editor.root)))
    await editor.wait_event(run_id, "done")
    mentions = [e for e in editor.run_events(run_id, "context") if e.get("what") == "mentions"]
    assert mentions[0]["attached"] == ["@api/pkg/client.py (6 lines)"] and mentions[0]["problems"] == []
    first = model.requests[-2]["messages"]
    assert any("class Client" in str(m["content"]) for m in first)
    assert tool_outputs(model.requests[-1]) == ["@api/pkg/client.py\n@api/pkg/config.py"]


async def test_an_ask_without_the_request_cannot_read_the_other_folder(editor, model):
    model.add_steps([step("read_file", path="@api/pkg/client.py"), step("task_complete", summary="no")])
    run_id = await editor.ask("read the client", folder=from_fs_path(str(editor.root)))
    await editor.wait_event(run_id, "done")
    (output,) = tool_outputs(model.requests[-1])
    assert "@api is another workspace folder, not open to this run" in output and "def fetch" not in output


async def test_an_unknown_folder_is_refused_or_reported_with_the_folders_there_are(editor, model):
    with pytest.raises(
        JsonRpcException, match=r"'nope' is not a workspace folder.*the folders are @app, @api"
    ):
        await editor.ask("read it", folder=from_fs_path(str(editor.root)), readFolders=["nope"])
    with pytest.raises(JsonRpcException, match="'readFolders' must be a list"):
        await editor.ask("read it", folder=from_fs_path(str(editor.root)), readFolders="api")
    model.add_steps([step("task_complete", summary="nothing there")])
    run_id = await editor.ask("look at @nope/x.py", folder=from_fs_path(str(editor.root)))
    await editor.wait_event(run_id, "done")
    (mentions,) = [e for e in editor.run_events(run_id, "context") if e.get("what") == "mentions"]
    assert mentions["problems"] == [
        "@nope/x.py: no file named 'nope/x.py' in the workspace; the ask goes on without it "
        "(and no workspace folder is named 'nope': the folders are @app, @api)"
    ]
