"""One scripted model and one editor per test module, and the script steps its runs play (real protocol).

from scripted_editor import editor_fixtures, finish_step, tool_step

model, editor = editor_fixtures({"calc.py": "..."})  # the module's `model` and `editor` fixtures

async def test_x(editor, model):
    model.add_steps([tool_step("read_file", path="calc.py"), finish_step("read it")])
    run_id = await editor.ask("read calc.py")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from server_editor import Editor, scripted_settings, start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer


def tool_step(name: str, /, *, thought: str = "", match: str | None = None, **arguments: Any) -> dict:
    """A script step: the reply's text and one native tool call (`match`: it answers only a request holding it)."""
    step: dict[str, Any] = {"content": thought, "tool_calls": [{"name": name, "arguments": arguments}]}
    if match is not None:
        step["match"] = match
    return step


def edit_step(path: str, old: str, new: str, match: str | None = None) -> dict:
    """A script step replacing `old` with `new` in one file (edit_file)."""
    return tool_step(
        "edit_file", thought=f"editing {path}", match=match, path=path, old_text=old, new_text=new
    )


def finish_step(summary: str, match: str | None = None) -> dict:
    """A script step finishing the task (task_complete)."""
    return tool_step("task_complete", thought="done", match=match, summary=summary)


async def code_actions_at(editor: Editor, uri: str, line: int) -> list[types.CodeAction | types.Command]:
    """The code actions the server offers at the start of one line (0-based), with no diagnostics."""
    position = types.Position(line=line, character=0)
    return await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


def editor_fixtures(
    files: dict[str, str],
    settings: Callable[[ScriptedModelServer], dict[str, Any]] = scripted_settings,
    *,
    untouched: bool = False,
) -> tuple[Any, Any]:
    """Module-scoped `model` (a ScriptedModelServer) and `editor` (the server on a workspace of `files`).

    `settings` gives the lspAgent settings for the model; with `untouched`, the editor's teardown checks that no
    file of the workspace changed on disk (nothing was applied).
    """

    @pytest.fixture(scope="module")
    def model() -> Iterator[ScriptedModelServer]:
        with ScriptedModelServer([]) as server:
            yield server

    @pytest_asyncio.fixture(scope="module", loop_scope="module")
    async def editor(
        tmp_path_factory: pytest.TempPathFactory, model: ScriptedModelServer
    ) -> AsyncIterator[Editor]:
        root = write_tree(tmp_path_factory.mktemp("ws") / "proj", files)
        init = {"lspAgent": settings(model)}
        ed = await start_editor(root, tmp_path_factory.mktemp("cache"), init_options=init)
        yield ed
        await stop_editor(ed)
        if untouched:  # 0 bytes written without acceptance: the server never wrote a file
            assert {rel: (root / rel).read_text() for rel in files} == files

    return model, editor
