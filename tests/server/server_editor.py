"""An editor-like pytest-lsp client for `python -m lsp_agent serve`: open documents, apply edits, collect events."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import LanguageClient, make_test_lsp_client

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = [sys.executable, "-m", "lsp_agent", "serve"]


def full_capabilities() -> types.ClientCapabilities:
    """A VS Code-like client: documentChanges, file operations, change annotations, progress, configuration."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=True,
            workspace_folders=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Rename,
                    types.ResourceOperationKind.Delete,
                ],
                change_annotation_support=types.ChangeAnnotationsSupportOptions(groups_on_label=True),
            ),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            execute_command=types.ExecuteCommandClientCapabilities(),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(value_set=["quickfix", "refactor"])
                )
            )
        ),
    )


def plain_capabilities() -> types.ClientCapabilities:
    """A Neovim-like client: plain `changes`, no annotations, no progress."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=True, workspace_folders=True),
    )


def plain(value: Any) -> Any:
    """Named tuples (how pygls hands custom notifications to a client) -> dicts, recursively."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def server_env(cache: Path) -> dict[str, str]:
    """The server's environment: this checkout importable, a private cache and home, no real model settings.

    The private HOME and XDG_CONFIG_HOME keep the user's ~/.config/lsp-agent (mcp.json, ...) out of the tests.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LSP_AGENT_", "OPENAI_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["XDG_CACHE_HOME"] = str(cache)
    home = cache / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    env["HOME"], env["XDG_CONFIG_HOME"] = str(home), str(home / ".config")
    env["XDG_STATE_HOME"] = str(home / ".state")  # last proposals, applies, daily spend
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


class Editor:
    """A test editor around a pytest-lsp client: open buffers, applied edits, lspAgent events."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, tuple[str, int]] = {}  # uri -> (text, version)
        self.events: list[dict] = []
        self.applied: list[types.WorkspaceEdit] = []
        self.permission_answer: str | None = "Deny"  # the action the user picks; None = dismissed
        self.permission_prompts: list[str] = []
        self.permission_titles: list[list[str]] = []  # the options each prompt offered
        self.registrations: list[types.Registration] = []
        self.initialize_seconds = 0.0  # initialize request -> reply (once the process is up: measure_startup)
        self.startup_seconds = 0.0  # spawn -> process idle (interpreter start and imports; measure_startup)
        self._event_arrived = asyncio.Event()

    # ----- documents ----------------------------------------------------------------------------------------

    def uri(self, rel: str) -> str:
        """The URI of a workspace file."""
        return from_fs_path(str(self.root / rel))

    def open(self, rel: str, text: str | None = None) -> str:
        """didOpen a file (its disk text unless given)."""
        uri = self.uri(rel)
        text = (self.root / rel).read_text() if text is None else text
        self.docs[uri] = (text, 1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        """didChange with the whole new text (unsaved edit)."""
        version = self.docs[uri][1] + 1
        self.docs[uri] = (text, version)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, uri: str) -> None:
        """didClose a document."""
        self.docs.pop(uri, None)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def text(self, uri: str) -> str:
        """The buffer text of an open document, else the disk text."""
        if uri in self.docs:
            return self.docs[uri][0]
        return Path(to_fs_path(uri)).read_text()

    # ----- applying edits like an editor --------------------------------------------------------------------

    def apply(self, edit: types.WorkspaceEdit) -> types.ApplyWorkspaceEditResult:
        """Apply a WorkspaceEdit to open buffers (sending didChange) or to disk; refuse stale versions."""
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                uri, version = change.text_document.uri, change.text_document.version
                if version is not None and uri in self.docs and self.docs[uri][1] != version:
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason=f"{uri}: version mismatch"
                    )
        self.applied.append(edit)
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                path = Path(to_fs_path(change.uri))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("")
            elif isinstance(change, types.DeleteFile):
                Path(to_fs_path(change.uri)).unlink()
            else:
                self._edit(change.text_document.uri, change.edits)
        for uri, edits in (edit.changes or {}).items():
            self._edit(uri, edits)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _edit(self, uri: str, edits: Any) -> None:
        path = Path(to_fs_path(uri))
        text = self.text(uri) if (uri in self.docs or path.exists()) else ""
        text = apply_text_edits(text, list(edits))
        if uri in self.docs:
            self.change(uri, text)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    # ----- events -------------------------------------------------------------------------------------------

    def on_event(self, payload: Any) -> None:
        self.events.append(plain(payload))
        self._event_arrived.set()

    def run_events(self, run_id: str, kind: str | None = None) -> list[dict]:
        """Events of one run (optionally of one kind)."""
        return [e for e in self.events if e["runId"] == run_id and (kind is None or e["kind"] == kind)]

    async def wait_event(self, run_id: str, kind: str, timeout: float = 60) -> dict:
        """The first event of `kind` for a run, waiting for it."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.run_events(run_id, kind)
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"no {kind!r} event for run {run_id}; got {self.run_events(run_id)}")
            self._event_arrived.clear()
            try:
                await asyncio.wait_for(self._event_arrived.wait(), 0.5)
            except TimeoutError:
                pass

    async def command(self, name: str, *args: Any) -> Any:
        """workspace/executeCommand, result as plain JSON."""
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(args))
        )
        return plain(result)

    async def wait_index_ready(self, timeout: float = 30) -> dict:
        """Poll lspAgent.status until the index is ready; returns that status."""
        for _ in range(int(timeout * 10)):
            status = await self.command("lspAgent.status")
            if status["index"]["ready"]:
                return status
            await asyncio.sleep(0.1)
        raise AssertionError(f"index never ready: {status}")

    def edit_events(self, run_id: str) -> list[dict]:
        """The `edits` events of a run (what the server settled as applied or rejected)."""
        return self.run_events(run_id, "edits")

    async def wait_edits(self, run_id: str, count: int, timeout: float = 10) -> list[dict]:
        """Wait until a run has `count` edits events; returns them."""
        deadline = time.monotonic() + timeout
        while len(self.edit_events(run_id)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{count} edits event(s) expected for run {run_id}: {self.edit_events(run_id)}"
                )
            await asyncio.sleep(0.05)
        return self.edit_events(run_id)

    async def ask(self, task: str, **extra: Any) -> str:
        """lspAgent.ask; returns the run id."""
        return (await self.command("lspAgent.ask", {"task": task, **extra}))["runId"]


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply non-overlapping TextEdits (ASCII test texts: characters are UTF-16 units)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        return starts[pos.line] + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(edit.range.start), offset(edit.range.end)
        text = text[:a] + edit.new_text + text[b:]
    return text


async def start_editor(
    root: Path,
    cache: Path,
    *,
    init_options: dict | None = None,
    capabilities: types.ClientCapabilities | None = None,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
    folders: list[Path] | None = None,
    measure_startup: bool = False,
) -> Editor:
    """Spawn the server, initialize it with `root` as the workspace folder (or `folders`, `root` among them); the
    editor measures initialize (alone, once the process is idle, with `measure_startup`)."""
    client = make_test_lsp_client()
    editor = Editor(client, root)
    # No structure hooks: the client reads code actions exactly as any lsprotocol/pygls client does.

    @client.feature("lspAgent/event")
    def _event(params: Any) -> None:
        editor.on_event(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return editor.apply(params.edit)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        editor.permission_prompts.append(params.message)
        editor.permission_titles.append([a.title for a in params.actions or []])
        return (
            None
            if editor.permission_answer is None
            else types.MessageActionItem(title=editor.permission_answer)
        )

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        editor.registrations.extend(params.registrations)

    command = list(command or SERVER_CMD)
    if os.environ.get("LSP_AGENT_TEST_SERVER_LOG"):  # debugging aid: the server's DEBUG log in a file
        command += ["--log-level", "DEBUG", "--log-file", os.environ["LSP_AGENT_TEST_SERVER_LOG"]]
    await client.start_io(*command, env={**server_env(cache), **(env or {})}, cwd=str(root))
    if measure_startup:  # waiting for the imports to end costs every other test ~0.2 s per server
        spawned = time.perf_counter()
        await wait_until_idle(client._server.pid)
        editor.startup_seconds = time.perf_counter() - spawned
    started = time.perf_counter()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or full_capabilities(),
            root_uri=from_fs_path(str(root)),
            workspace_folders=[
                types.WorkspaceFolder(uri=from_fs_path(str(f)), name=f.name) for f in (folders or [root])
            ],
            initialization_options=init_options or {},
        )
    )
    editor.initialize_seconds = time.perf_counter() - started
    return editor


async def wait_until_idle(pid: int, timeout: float = 30) -> None:
    """Wait until a freshly spawned process stops using CPU (done importing, blocked reading stdin)."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        await asyncio.sleep(1.0)
        return
    last, quiet, deadline = -1, 0, time.monotonic() + timeout
    while quiet < 3 and time.monotonic() < deadline:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        used = int(fields[11]) + int(fields[12])  # utime + stime in clock ticks
        quiet = quiet + 1 if used == last and fields[0] == "S" else 0
        last = used
        await asyncio.sleep(0.05)


async def stop_editor(editor: Editor) -> None:
    """Shut the server down cleanly."""
    await editor.client.shutdown_session()
    await editor.client.stop()


def scripted_settings(model: Any, **extra: Any) -> dict[str, Any]:
    """lspAgent settings for a run against a ScriptedModelServer with native tool calls, plus `extra`."""
    return {
        "model": "openai/scripted",
        "apiBase": model.base_url,
        "apiKey": "test",
        "toolCalling": "native",
        **extra,
    }


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Create files under root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
