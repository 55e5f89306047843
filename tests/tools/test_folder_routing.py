"""Cross-folder reading through the registry: `@name/...` reaches a folder open for reading with the same checks as
the run's own folder (escapes, ignore rules, secret files and values, size, binary); writes there are refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_agent.agent.conversation.mentions import MentionSources, read_text_file, resolve_mentions
from lsp_agent.assembly import open_index
from lsp_agent.config import Settings
from lsp_agent.tools.read_folders import FolderRouter
from lsp_agent.tools.registry import ToolContext, default_registry
from lsp_agent.workspace.folders import FolderError, folder_access, mentioned_folders, named_folders
from lsp_agent.workspace.overlay import Overlay
from lsp_agent.workspace.redaction import redactor_for
from lsp_agent.workspace.secrets import secret_files_of

CLIENT = "def fetch(url):\n    return url\n\n\nclass Client:\n    pass\n"


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """Three workspace folders: app (the run's), api (to read) and web (never opened)."""
    app, api, web = tmp_path / "app", tmp_path / "api", tmp_path / "web"
    for path, text in {
        app / "src" / "main.py": "from api.client import fetch\n",
        api / "pkg" / "client.py": CLIENT,
        api / "pkg" / "leak.py": 'print("s3cr3t-value-42")\n',
        api / ".env": "API_TOKEN=s3cr3t-value-42\n",
        api / ".gitignore": "build/\n",
        api / "build" / "out.py": "def fetch_built(): pass\n",
        api / "big.txt": "x" * 5000 + "\n",
        web / "index.js": "fetch('/api')\n",
    }.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (api / "logo.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    return named_folders([("app", app), ("api", api), ("web", web)])


def run_tool(
    folders: dict[str, Path], tool: str, readable: tuple[str, ...] = ("api",), index_for=None, **args
):
    settings = Settings(max_file_size=1000)
    root = folders["app"]
    ctx = ToolContext(root=root, overlay=Overlay(root), settings=settings)
    ctx.router = FolderRouter(folder_access(root, folders, readable), index_for=index_for)
    result = asyncio.run(default_registry().execute(tool, args, ctx))
    return result, ctx


def test_read_tools_reach_the_other_folder_and_name_its_paths(folders):
    listing, _ = run_tool(folders, "list_files", path="@api")
    assert listing.ok and listing.output.splitlines() == [
        "@api/.env  [secret file (secretFiles): contents never shown]",
        "@api/.gitignore",
        "@api/big.txt",
        "@api/logo.bin",
        "@api/pkg/",
    ]  # build/ is ignored by the folder's own .gitignore
    nothing, _ = run_tool(folders, "list_files", path="@api", pattern="*.rs")
    assert nothing.output.startswith("No files match '*.rs' in @api;")
    globbed, _ = run_tool(folders, "list_files", pattern="@api/**/*.py")
    assert globbed.output.splitlines() == ["@api/pkg/client.py", "@api/pkg/leak.py"]
    read, _ = run_tool(folders, "read_file", path="@api/pkg/client.py", start_line=1, end_line=2)
    assert read.ok and read.output == "1: def fetch(url):\n2:     return url"
    found, _ = run_tool(folders, "search_text", pattern="fetch", path="@api")
    assert found.output == "@api/pkg/client.py:1:def fetch(url):"
    info, _ = run_tool(folders, "get_file_info", path="@api/pkg/client.py")
    assert "path: @api/pkg/client.py" in info.output and "lines: 6" in info.output
    absolute, _ = run_tool(folders, "read_file", path=str(folders["api"] / "pkg" / "client.py"))
    assert absolute.ok and absolute.output.startswith("1: def fetch(url):")


def test_the_other_folder_keeps_every_path_check_and_secret(folders):
    secret, _ = run_tool(folders, "read_file", path="@api/.env")
    assert not secret.ok and "secret file" in secret.output and "s3cr3t" not in secret.output
    leak, _ = run_tool(folders, "search_text", pattern="value", path="@api")
    assert leak.output == '@api/pkg/leak.py:1:print("[REDACTED:API_TOKEN]")'  # the folder's own .env values
    escape, _ = run_tool(folders, "read_file", path="@api/../app/src/main.py")
    assert not escape.ok and "outside the root of @api" in escape.output
    huge, _ = run_tool(folders, "read_file", path="@api/big.txt")
    assert not huge.ok and "@api/big.txt: is 5,001 bytes, over the 1,000-byte limit" in huge.output
    binary, _ = run_tool(folders, "read_file", path="@api/logo.bin")
    assert not binary.ok and "@api/logo.bin" in binary.output
    ignored, _ = run_tool(folders, "search_text", pattern="fetch_built", path="@api")
    assert ignored.output.startswith("No matches for 'fetch_built' in @api.")
    missing, _ = run_tool(folders, "read_file", path="@api/nope.py")
    assert missing.output == "Error: @api/nope.py: file not found; use list_files to see which files exist"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "@api/pkg/new.py", "content": "X = 1\n"}),
        ("edit_file", {"path": "@api/pkg/client.py", "old_text": "url", "new_text": "u"}),
        ("delete_file", {"path": "@api/pkg/client.py"}),
        ("write_file", {"path": "API_ABS", "content": "X = 1\n"}),
        ("write_file", {"path": "@web/index.js", "content": "x"}),
    ],
)
def test_a_write_to_another_folder_is_refused_with_an_observation(folders, tool, args):
    if args["path"] == "API_ABS":
        args = {**args, "path": str(folders["api"] / "pkg" / "client.py")}
    result, ctx = run_tool(folders, tool, **args)
    assert not result.ok
    assert "which this run may only read" in result.output and "nothing was written" in result.output
    assert ctx.overlay.to_proposal().changes == []
    assert (folders["api"] / "pkg" / "client.py").read_text() == CLIENT
    own, ctx = run_tool(folders, "write_file", path="src/new.py", content="Y = 2\n")
    assert own.ok and [c.path for c in ctx.overlay.to_proposal().changes] == ["src/new.py"]


def test_a_folder_not_opened_for_reading_says_how_to_open_it(folders):
    result, _ = run_tool(folders, "read_file", path="@web/index.js")
    assert not result.ok
    assert "@web is another workspace folder, not open to this run" in result.output
    assert "readFolders" in result.output


def test_index_tools_search_each_readable_folder_after_the_runs_own(folders):
    result, _ = run_tool(folders, "find_symbol", name="fetch")
    assert result.ok
    assert result.output.startswith("In @app (this run's folder):\nfind_symbol is unavailable")
    assert "In @api: no index is loaded for this folder; use search_text with path='@api'" in result.output

    indexes = {}

    def index_for(root: Path):
        indexes[root] = open_index(root, Settings())
        return indexes[root]

    try:
        found, _ = run_tool(folders, "find_symbol", index_for=index_for, name="fetch")
        code, _ = run_tool(folders, "search_code", index_for=index_for, query="fetch url client")
    finally:
        for index in indexes.values():
            index.close()
    assert (
        "In @api (read-only):\nDefinitions of fetch (1):\n  @api/pkg/client.py:1-2 function fetch"
        in found.output
    )
    assert "fetch_built" not in found.output  # the folder's ignore rules hold in its index too
    assert "1. @api/pkg/client.py:1-" in code.output


def test_folder_names_are_unique_and_unknown_requests_list_the_folders(tmp_path: Path):
    named = named_folders(
        [("my app", tmp_path / "a"), (None, tmp_path / "x" / "api"), ("api", tmp_path / "b")]
    )
    assert list(named) == ["my-app", "api", "api-2"]
    access = folder_access(tmp_path / "a", named, ["api-2", str(tmp_path / "x" / "api")], "see @api/x.py")
    assert access.readable == ["api-2", "api"] and access.own_name == "my-app"
    with pytest.raises(
        FolderError, match=r"'nope' is not a workspace folder.*the folders are @my-app, @api, @api-2"
    ):
        folder_access(tmp_path / "a", named, ["nope"])
    assert mentioned_folders("compare @api/pkg and @api-2, not mail@api.org", named) == ["api", "api-2"]


def test_a_mention_reads_another_folder_and_a_missing_folder_is_named(folders):
    access = folder_access(folders["app"], folders, task="compare with @api/pkg/client.py and @nope/x.py")
    sources = MentionSources(
        folders["app"],
        lambda p: read_text_file(p),
        is_secret=secret_files_of(None).is_secret,
        folders=access,
        redact_in=lambda root: redactor_for(None, root).redact,
    )
    resolved = resolve_mentions("compare with @api/pkg/client.py and @nope/x.py", sources)
    assert resolved.attached == ["@api/pkg/client.py (6 lines)"]
    assert "@api/pkg/client.py (mentioned)" in resolved.blocks[0] and "class Client" in resolved.blocks[0]
    assert resolved.problems == [
        "@nope/x.py: no file named 'nope/x.py' in the workspace; the ask goes on without it "
        "(and no workspace folder is named 'nope': the folders are @app, @api, @web)"
    ]
    secret = resolve_mentions("@api/.env", sources)
    assert secret.blocks == [] and "secret file" in secret.problems[0]
