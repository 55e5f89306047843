"""Next edits through the real protocol: a signature edit in an open document becomes "Update N call sites of
`f`", applied as a whole or rejected per hunk; a malformed reply drops its site; no model means no action."""

from __future__ import annotations

import asyncio
import time

import pytest
import pytest_asyncio
from lsprotocol import types
from scripted_editor import code_actions_at
from server_editor import scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

CORE = "def parse(text):\n    return text.split()\n\n\ndef other(x):\n    return x\n"
USES = {
    "a.py": "from core import parse\n\nwords = parse('a b')\n",
    "b.py": "from core import parse\n\n\ndef run(s):\n    return parse(s)\n",
    "c.py": "from core import other\n\nprint(other(1))\n",
}
FILES = {"core.py": CORE, **USES}
NEW_CORE = CORE.replace("def parse(text):", "def parse(text, sep):")


def reply(*sites: tuple[int, str]) -> dict:
    """A scripted model reply giving each numbered site its new lines."""
    return {"content": "".join(f'<site id="{n}">\n{text}\n</site>\n' for n, text in sites)}


@pytest.fixture(scope="module")
def model():
    with ScriptedModelServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory, model):
    root = write_tree(tmp_path_factory.mktemp("ws") / "proj", FILES)
    ed = await start_editor(
        root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": scripted_settings(model)}
    )
    await ed.wait_index_ready()
    yield ed
    await stop_editor(ed)


async def offered(editor, uri: str, line: int, prefix: str, timeout: float = 60) -> list:
    """Code actions at `line` once one titled `prefix...` shows up (a loaded machine waits long for the first
    model request: litellm imports then)."""
    deadline = time.monotonic() + timeout
    while True:
        actions = await code_actions_at(editor, uri, line)
        if any(a.title.startswith(prefix) for a in actions):
            return actions
        if time.monotonic() > deadline:
            raise AssertionError(f"no {prefix!r} action; got {[a.title for a in actions]}")
        await asyncio.sleep(0.2)


async def pending_next_edits(editor) -> list[dict]:
    status = await editor.command("lspAgent.status")
    return [p for p in status["pending"] if p["runId"].startswith("next-edit-")]


async def test_a_new_parameter_offers_its_call_sites_and_applying_updates_them(editor, model):
    model.add_steps([reply((1, "words = parse('a b', ' ')"), (2, "    return parse(s, ' ')"))])
    uri = editor.open("core.py")
    editor.change(uri, NEW_CORE)
    actions = await offered(editor, uri, 0, "Update 2 call sites of `parse`")
    request = model.requests[-1]["messages"][-1]["content"]
    assert "def parse(text, sep):" in request and "new required `sep`" in request
    assert "words = parse('a b')" in request and "return parse(s)" in request and "other(1)" not in request
    update = next(a for a in actions if a.title == "Update 2 call sites of `parse`")
    assert {p.title for p in await code_actions_at(editor, uri, 4)}.isdisjoint(
        {update.title}
    )  # not at other()

    (pending,) = await pending_next_edits(editor)
    run_id = pending["runId"]
    editor.apply(update.edit)
    assert (editor.root / "a.py").read_text() == "from core import parse\n\nwords = parse('a b', ' ')\n"
    assert (editor.root / "b.py").read_text().endswith("    return parse(s, ' ')\n")
    assert (editor.root / "c.py").read_text() == USES["c.py"]
    assert await pending_next_edits(editor) == []  # settled from the files' text, never taken on trust
    (settled,) = await editor.wait_edits(run_id, 1)
    assert settled["outcome"] == "applied" and settled["state"] == "applied"
    editor.close(uri)


async def test_rejecting_one_hunk_leaves_that_file_untouched(editor, model):
    write_tree(editor.root, {"d.py": "from core import other\n\nz = other(2)\n"})
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("core.py")
    model.add_steps([reply((1, "print(other(1, 0))"), (2, "z = other(2, 0)"))])
    editor.change(uri, editor.text(uri).replace("def other(x):", "def other(x, y):"))
    actions = await offered(editor, uri, 4, "Update 2 call sites of `other`")
    assert any(a.title.startswith("Dismiss") for a in actions)
    (pending,) = await pending_next_edits(editor)
    assert sorted(f["path"] for f in pending["files"]) == ["c.py", "d.py"]

    c_uri = editor.open("c.py")
    hunk = next(a for a in await code_actions_at(editor, c_uri, 2) if a.title.startswith("Reject this"))
    await editor.command(hunk.command, *hunk.arguments)
    assert [f["path"] for f in (await pending_next_edits(editor))[0]["files"]] == ["d.py"]
    update = next(a for a in await code_actions_at(editor, uri, 4) if a.title.startswith("Update"))
    assert update.title == "Update 2 call sites of `other` (1 of 2 changes left)"
    editor.apply(update.edit)  # what is left: d.py only
    assert editor.text(c_uri) == USES["c.py"] and (editor.root / "c.py").read_text() == USES["c.py"]
    assert (editor.root / "d.py").read_text() == "from core import other\n\nz = other(2, 0)\n"
    assert await pending_next_edits(editor) == []
    editor.close(c_uri)
    editor.close(uri)


async def test_a_malformed_block_drops_its_site_and_the_server_stays_up(editor, model):
    write_tree(editor.root, FILES)
    (editor.root / "d.py").unlink()
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("core.py")
    model.add_steps(
        [
            {
                "content": '<site id="1">\n```\nwords = parse(1)\n```\n</site>\n<site id="2">\n    return parse(s, 0)\n</site>'
            }
        ]
    )
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, n):"))
    actions = await offered(editor, uri, 0, "Update 1 call site of `parse`")
    (pending,) = await pending_next_edits(editor)
    assert [f["path"] for f in pending["files"]] == ["b.py"]
    logged = [m.message for m in editor.client.log_messages]
    assert any("site 1 (a.py:3) dropped: the replacement holds a code fence" in m for m in logged), logged
    assert not [m for m in editor.client.messages if m.type == 1]  # no error popup
    assert any(a.title.startswith("Dismiss") for a in actions)
    dismiss = next(a for a in actions if a.title.startswith("Dismiss"))
    await editor.command(dismiss.command, *dismiss.arguments)
    assert await pending_next_edits(editor) == []
    assert (await editor.command("lspAgent.status"))["index"]["ready"]  # still answering
    editor.close(uri)


async def test_a_site_holding_a_secret_value_is_never_sent_to_the_model(editor, model):
    token = "tok-4f9a2b7c1d8e"
    write_tree(
        editor.root,
        {**FILES, ".env": f"SERVICE_TOKEN={token}\n", "e.py": f"from core import parse\nparse('{token}')\n"},
    )
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("core.py")
    model.add_steps([reply((1, "words = parse('a b', 0)"), (2, "    return parse(s, 0)"))])
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, n):"))
    await offered(editor, uri, 0, "Update 2 call sites of `parse`")
    assert token not in model.requests[-1]["messages"][-1]["content"]
    assert any("1 site(s) left out: secret file or value" in m.message for m in editor.client.log_messages)
    (pending,) = await pending_next_edits(editor)
    await editor.command("lspAgent.rejectEdits", {"runId": pending["runId"]})
    editor.close(uri)
    (editor.root / "e.py").unlink()
    (editor.root / ".env").unlink()


async def test_editing_the_definition_again_replaces_the_offer_with_one_from_the_original(editor, model):
    write_tree(editor.root, FILES)
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("core.py")
    first = reply((1, "words = parse('a b', s)"), (2, "    return parse(s, s)"))
    second = reply((1, "words = parse('a b', sep=' ')"), (2, "    return parse(s, sep=' ')"))
    model.add_steps([{**first, "match": "new required `s`"}, {**second, "match": "new required `sep`"}])
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, s):"))
    await offered(editor, uri, 0, "Update 2 call sites of `parse`")
    (earlier,) = await pending_next_edits(editor)
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, sep):"))
    for _ in range(100):
        pending = await pending_next_edits(editor)
        if [p["runId"] for p in pending] not in ([earlier["runId"]], []):
            break
        await asyncio.sleep(0.1)
    (later,) = pending
    assert later["runId"] != earlier["runId"]
    request = model.requests[-1]["messages"][-1]["content"]
    assert "Before:\ndef parse(text):" in request and "After:\ndef parse(text, sep):" in request
    await editor.command("lspAgent.rejectEdits", {"runId": later["runId"]})
    assert await pending_next_edits(editor) == []
    assert {
        rel: (editor.root / rel).read_text() for rel in USES
    } == USES  # nothing written without acceptance
    editor.close(uri)


async def test_a_renamed_attribute_offers_its_uses_in_other_files_and_its_own_class(editor, model):
    shapes = "class Box:\n    def __init__(self, h):\n        self.h = h\n\n    def tall(self):\n        return self.h > 2\n"
    draw = "from shapes import Box\n\nprint(Box(3).h)\n"
    write_tree(editor.root, {"shapes.py": shapes, "draw.py": draw})
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("shapes.py")
    model.add_steps([reply((1, "print(Box(3).height)"), (2, "        return self.height > 2"))])
    editor.change(uri, shapes.replace("self.h = h", "self.height = h"))
    await offered(editor, uri, 0, "Rename 2 uses of `h` to `height`")
    request = model.requests[-1]["messages"][-1]["content"]
    assert "attribute `h` of `Box` renamed to `height`" in request
    assert '<site id="1" path="draw.py" lines="3-3">' in request and 'path="shapes.py" lines="6-6"' in request
    (pending,) = await pending_next_edits(editor)
    await editor.command("lspAgent.applyEdits", {"runId": pending["runId"]})
    assert (editor.root / "draw.py").read_text() == draw.replace(".h)", ".height)")
    assert editor.text(uri).endswith("        return self.height > 2\n")
    assert "self.height = h" in editor.text(uri)  # the user's own edit is untouched
    editor.close(uri)


async def test_a_change_made_while_the_model_answers_is_diffed_from_the_original_and_a_revert_withdraws(
    editor, model
):
    write_tree(editor.root, FILES)
    await editor.command("lspAgent.reindex")
    await editor.wait_index_ready()
    uri = editor.open("core.py")
    slow = {**reply((1, "words = parse('a b', x)"), (2, "    return parse(s, x)")), "delay": 3}
    fast = reply((1, "words = parse('a b', key=1)"), (2, "    return parse(s, key=1)"))
    model.add_steps([{**slow, "match": "new required `x`"}, {**fast, "match": "new required `key`"}])
    asked = len(model.requests)
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, x):"))
    for _ in range(100):  # the first request is in flight
        if len(model.requests) > asked:
            break
        await asyncio.sleep(0.05)
    editor.change(uri, CORE.replace("def parse(text):", "def parse(text, *, key):"))
    await offered(editor, uri, 0, "Update 2 call sites of `parse`")
    await asyncio.sleep(3)  # the slow answer arrives and is dropped
    (pending,) = await pending_next_edits(editor)
    (update,) = [a for a in await code_actions_at(editor, uri, 0) if a.title.startswith("Update")]
    texts = [e.new_text for c in update.edit.document_changes for e in c.edits]
    assert texts and all("key=1" in t for t in texts), texts
    assert "Before:\ndef parse(text):" in model.requests[-1]["messages"][-1]["content"]
    editor.change(uri, CORE)  # back as it was: nothing to update
    for _ in range(60):
        if not await pending_next_edits(editor):
            break
        await asyncio.sleep(0.1)
    assert await pending_next_edits(editor) == []
    assert {rel: (editor.root / rel).read_text() for rel in USES} == USES
    editor.close(uri)


async def test_no_model_configured_means_no_action_and_no_error(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("ws") / "proj", FILES)
    ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options={"lspAgent": {}})
    try:
        await ed.wait_index_ready()
        uri = ed.open("core.py")
        ed.change(uri, NEW_CORE)
        await asyncio.sleep(2.0)  # past the pause after which a configured model would be asked
        titles = [a.title for a in await code_actions_at(ed, uri, 0)]
        assert not any(t.startswith("Update") for t in titles)
        assert await pending_next_edits(ed) == []
        assert {rel: (root / rel).read_text() for rel in USES} == USES
        assert not [m for m in ed.client.messages if m.type == 1]  # no error popup
    finally:
        await stop_editor(ed)


async def test_a_definition_changed_in_a_secret_file_asks_the_model_nothing(editor, model):
    write_tree(editor.root, FILES)
    settings = scripted_settings(model)
    # without the rule the edit's call sites are offered (and the model client is warm for what follows)
    model.add_steps([reply((1, "words = parse('a b', ' ')"), (2, "    return parse(s, ' ')"))])
    uri = editor.open("core.py", CORE)
    editor.change(uri, NEW_CORE)
    await offered(editor, uri, 0, "Update 2 call sites of `parse`")
    assert "In core.py" in model.requests[-1]["messages"][-1]["content"]
    (pending,) = await pending_next_edits(editor)
    await editor.command("lspAgent.rejectEdits", {"runId": pending["runId"]})
    editor.close(uri)

    secret = {**settings, "secretFiles": ["core.py"]}
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": secret})
    )
    await editor.wait_index_ready()
    asked = len(model.requests)
    uri = editor.open("core.py", CORE)
    editor.change(uri, NEW_CORE)
    await asyncio.sleep(4)  # past the pause after which the definitions are compared, and a warm request
    assert len(model.requests) == asked and await pending_next_edits(editor) == []
    editor.close(uri)
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": settings})
    )
    await editor.wait_index_ready()
