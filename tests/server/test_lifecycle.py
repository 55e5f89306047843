"""Lifecycle through the real protocol: fast initialize, background indexing with progress, status, search,
bad settings reported by name, and a run without a model ending at once with an actionable error."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from server_editor import start_editor, stop_editor, write_tree

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {
    "shop/cart.py": "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
    "    def total_price(self):\n        return sum(i.price for i in self.items)\n",
    "shop/payment.py": "def charge_card(card, amount):\n    '''Charge a credit card.'''\n    return card.charge(amount)\n",
    "README.md": "# shop\nA tiny shop.\n",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("ws") / "shop-project", FILES)
    ed = await start_editor(
        root,
        tmp_path_factory.mktemp("cache"),
        init_options={
            "lspAgent": {"maxIterations": "lots", "toolCalling": "psychic", "index": {"exclude": ["*.md"]}}
        },
        measure_startup=True,
    )
    yield ed
    await stop_editor(ed)


async def test_initialize_answers_fast_and_advertises_the_commands(editor):
    assert editor.initialize_seconds < 1.0
    caps = (
        editor.client.protocol.server_capabilities
        if hasattr(editor.client.protocol, "server_capabilities")
        else None
    )
    status = await editor.command("lspAgent.status")
    assert set(status) >= {"index", "runs"}
    assert caps is None or caps.execute_command_provider is not None
    assert status["mcp"] == []  # the server runs with a private HOME: no user-level mcp.json leaks in


async def test_bad_settings_are_reported_by_name_and_defaults_kept(editor):
    await editor.wait_index_ready()
    errors = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
    joined = " ".join(errors)
    assert "setting lspAgent.maxIterations has a bad value 'lots'" in joined
    assert "setting lspAgent.toolCalling has a bad value 'psychic'" in joined
    status = await editor.command("lspAgent.status")
    assert any("lspAgent.maxIterations" in e for e in status["settingsErrors"])


async def test_indexing_runs_in_the_background_under_a_progress_token(editor):
    status = await editor.wait_index_ready()
    assert status["index"]["files"] == 2  # README.md is excluded by the index.exclude setting
    assert status["index"]["chunks"] >= 2 and status["index"]["symbols"] >= 3
    tokens = [t for t, reports in editor.client.progress_reports.items() if reports]
    index_reports = next(
        r
        for t in tokens
        if isinstance((r := editor.client.progress_reports[t])[0], types.WorkDoneProgressBegin)
        and "index" in r[0].title
    )
    assert isinstance(index_reports[0], types.WorkDoneProgressBegin) and index_reports[0].cancellable
    assert any(isinstance(r, types.WorkDoneProgressReport) for r in index_reports)
    assert isinstance(index_reports[-1], types.WorkDoneProgressEnd) and "2 files" in index_reports[-1].message


async def test_search_returns_hits_with_uris(editor):
    await editor.wait_index_ready()
    hits = await editor.command("lspAgent.search", {"query": "charge credit card", "topK": 3})
    assert hits and hits[0]["path"] == "shop/payment.py"
    assert hits[0]["uri"] == editor.uri("shop/payment.py")
    assert {"start", "end", "score", "text"} <= set(hits[0])


async def test_a_second_initialize_is_refused_and_the_session_kept(editor):
    await editor.wait_index_ready()
    again = types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=None, workspace_folders=[]
    )
    with pytest.raises(JsonRpcException) as refused:
        await editor.client.protocol.send_request_async(types.INITIALIZE, again)
    assert refused.value.code == -32600 and "already initialized" in refused.value.message
    hits = await editor.command("lspAgent.search", {"query": "charge credit card", "topK": 1})
    assert hits[0]["uri"] == editor.uri("shop/payment.py")  # the workspace folder is still there
    run_id = await editor.ask("summarise the shop")  # needs the folder: no "needs a workspace folder" error
    error = await editor.wait_event(run_id, "error", timeout=5)
    assert "workspace folder" not in error["message"] and "lspAgent.model" in error["message"]


async def test_unsaved_buffer_text_reaches_the_index(editor):
    await editor.wait_index_ready()
    uri = editor.open("shop/cart.py")
    editor.change(
        uri, FILES["shop/cart.py"] + "\n    def apply_voucher_discount(self, code):\n        return code\n"
    )
    for _ in range(50):
        hits = await editor.command("lspAgent.search", {"query": "apply_voucher_discount", "topK": 1})
        if hits and "apply_voucher_discount" in hits[0]["text"]:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"unsaved text never indexed: {hits}")
    editor.close(uri)  # the unsaved text is discarded: the index goes back to the disk text
    for _ in range(50):
        hits = await editor.command("lspAgent.search", {"query": "apply_voucher_discount", "topK": 1})
        if not any("apply_voucher_discount" in h["text"] for h in hits):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"closing without saving left the unsaved text in the index: {hits}")


async def test_saving_indexes_the_saved_text(editor):
    await editor.wait_index_ready()
    uri = editor.open("shop/payment.py")
    saved = FILES["shop/payment.py"] + "\n\ndef refund_gift_voucher(card):\n    return card\n"
    (editor.root / "shop/payment.py").write_text(saved)
    editor.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri), text=saved)
    )
    for _ in range(200):  # 20 s: on a loaded machine the debounced update took longer than 5 s once
        hits = await editor.command("lspAgent.search", {"query": "refund_gift_voucher", "topK": 1})
        if hits and "refund_gift_voucher" in hits[0]["text"]:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"saved text never indexed: {hits}")
    editor.close(uri)


async def test_bad_command_arguments_get_a_clear_error(editor):
    with pytest.raises(Exception, match="task"):
        await editor.command("lspAgent.ask", {"uri": editor.uri("shop/cart.py")})
    with pytest.raises(Exception, match="topK"):
        await editor.command("lspAgent.search", {"query": "x", "topK": 0})
    with pytest.raises(Exception, match="no run"):
        await editor.command("lspAgent.applyEdits", {"runId": "nope"})


async def test_no_model_configured_ends_the_run_at_once_naming_the_setting(editor):
    editor.client.messages.clear()
    run_id = await editor.ask("add a docstring to Cart")
    error = await editor.wait_event(run_id, "error", timeout=5)
    done = await editor.wait_event(run_id, "done", timeout=5)
    assert "lspAgent.model" in error["message"] and "LSP_AGENT_MODEL" in error["message"]
    assert done["stopReason"] == "error"
    shown = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
    assert any("lspAgent.model" in m for m in shown)
    status = await editor.command("lspAgent.status")
    assert {"runId": run_id, "state": "error"}.items() <= next(
        r for r in status["runs"] if r["runId"] == run_id
    ).items()
    reports = editor.client.progress_reports.get(f"lsp-agent/run/{run_id}", [])
    assert reports and isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_settings_change_takes_effect(editor):
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"lspAgent": {"maxIterations": 7, "toolCalling": "prompt", "model": "openai/scripted"}}
        )
    )
    for _ in range(50):
        status = await editor.command("lspAgent.status")
        if status.get("model") == "openai/scripted":
            break
        await asyncio.sleep(0.05)
    assert status["model"] == "openai/scripted"
    assert "settingsErrors" not in status


async def test_watched_file_events_and_new_folders_keep_the_index_fresh(editor, tmp_path_factory):
    await editor.wait_index_ready()
    assert [(r.method, r.register_options["watchers"][0]["globPattern"]) for r in editor.registrations] == [
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, "**/*")
    ]
    path = editor.root / "shop" / "shipping.py"
    path.write_text("def estimate_parcel_shipping(weight):\n    return weight * 3\n")
    editor.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=editor.uri("shop/shipping.py"), type=types.FileChangeType.Created)]
        )
    )
    for _ in range(50):
        hits = await editor.command("lspAgent.search", {"query": "estimate_parcel_shipping", "topK": 1})
        if hits and hits[0]["path"] == "shop/shipping.py":
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"created file never indexed: {hits}")

    extra = write_tree(
        tmp_path_factory.mktemp("extra") / "lib",
        {"tax.py": "def compute_vat_rate(country):\n    return 0.2\n"},
    )
    folder = types.WorkspaceFolder(uri=extra.as_uri(), name="lib")
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
        )
    )
    for _ in range(100):
        hits = await editor.command("lspAgent.search", {"query": "compute_vat_rate", "topK": 1})
        if hits and hits[0]["uri"] == (extra / "tax.py").as_uri():
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"new folder never indexed: {hits}")
    assert (await editor.command("lspAgent.status"))["index"]["files"] == 4


async def test_settings_are_pulled_with_workspace_configuration(editor):
    editor.client.set_configuration({"model": "openai/pulled-model", "maxIterations": 5}, section="lspAgent")
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    for _ in range(50):
        status = await editor.command("lspAgent.status")
        if status.get("model") == "openai/pulled-model":
            break
        await asyncio.sleep(0.05)
    assert status["model"] == "openai/pulled-model"


async def test_reindex_rebuilds_under_a_new_progress_token(editor):
    await editor.wait_index_ready()
    before = set(editor.client.progress_reports)
    result = await editor.command("lspAgent.reindex")
    assert result["started"] is True and result["folders"]
    status = await editor.wait_index_ready()
    assert status["index"]["files"] >= 2
    new_tokens = [t for t in editor.client.progress_reports if t not in before]
    for _ in range(50):
        reports = [editor.client.progress_reports[t] for t in new_tokens]
        if reports and isinstance(reports[0][-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.1)
        new_tokens = [t for t in editor.client.progress_reports if t not in before]
    assert len(new_tokens) == 1 and "indexed" in editor.client.progress_reports[new_tokens[0]][-1].message


async def test_code_actions_offer_to_ask_about_a_selection_and_to_fix_a_diagnostic(editor):
    uri = editor.open("shop/payment.py")
    problem = types.Diagnostic(
        range=types.Range(
            start=types.Position(line=2, character=11), end=types.Position(line=2, character=15)
        ),
        message="'card' may be None",
        source="mypy",
    )
    selection = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=2, character=0)
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=selection,
            context=types.CodeActionContext(diagnostics=[problem]),
        )
    )
    by_title = {a.title: a for a in actions}
    ask = by_title["Ask agent about this selection"]  # a plain Command: every client family reads it alike
    assert ask.command == "lspAgent.ask" and ask.arguments[0]["needsTask"] is True
    assert ask.arguments[0]["uri"] == uri and ask.arguments[0]["range"]["end"] == {"line": 2, "character": 0}
    fix = by_title["Ask agent to fix: 'card' may be None"]
    assert fix.command == "lspAgent.ask"
    assert fix.arguments[0]["task"] == "Fix this problem reported at line 3 (mypy): 'card' may be None"
    with pytest.raises(Exception, match="prompt for the question"):
        await editor.command(ask.command, *ask.arguments)
    editor.close(uri)


async def test_cancelling_the_index_progress_stops_indexing(editor, tmp_path_factory):
    files = {f"gen/m{i:04d}.py": f"def generated_{i}(x):\n    return x * {i}\n" for i in range(300)}
    big = write_tree(tmp_path_factory.mktemp("big") / "big", files)
    before = set(editor.client.progress_reports)
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=big.as_uri(), name="big")], removed=[]
            )
        )
    )
    token = None
    for _ in range(300):
        fresh = [t for t, r in editor.client.progress_reports.items() if t not in before and r]
        if fresh:
            token = fresh[0]
            break
        await asyncio.sleep(0.02)
    assert token is not None, "indexing never started"
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    for _ in range(600):
        reports = editor.client.progress_reports[token]
        if isinstance(reports[-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.05)
    assert "cancelled" in reports[-1].message
    status = await editor.command("lspAgent.status")
    assert status["index"]["ready"] is False and status["index"]["files"] < 300 + 4
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=big.as_uri(), name="big")]
            )
        )
    )
    status = await editor.wait_index_ready()  # a removed folder leaves the index; the others are complete
    assert status["index"]["files"] == 4
    hits = await editor.command("lspAgent.search", {"query": "generated_7", "topK": 3})
    assert not any(h["uri"].startswith(big.as_uri()) for h in hits)
