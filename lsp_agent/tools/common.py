"""Helpers shared by the built-in tools: safe text loading, line splitting, languages."""

from __future__ import annotations

from pathlib import PurePosixPath

from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.workspace.overlay import FileTooLargeError
from lsp_agent.workspace.paths import require_regular_file
from lsp_agent.workspace.secrets import lexical_rel

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".kt": "kotlin",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".md": "markdown",
    ".rst": "restructuredtext",
    ".txt": "text",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".html": "html",
    ".css": "css",
    ".scss": "scss",
    ".sql": "sql",
    ".xml": "xml",
    ".vim": "vim",
}
FILENAMES = {"Makefile": "makefile", "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake"}


def language_of(rel: str) -> str:
    """The language of a file guessed from its name ('unknown' when there is no guess)."""
    name = PurePosixPath(rel).name
    if name in FILENAMES:
        return FILENAMES[name]
    return LANGUAGES.get(PurePosixPath(rel).suffix.lower(), "unknown")


def split_lines(text: str) -> list[str]:
    """Lines as editors count them: split on LF, a trailing CR dropped, no phantom line after a final newline."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def refuse_secret(ctx: ToolContext, given: str, key: str, *, is_dir: bool = False) -> None:
    """SecretFileError when the path as the model wrote it, or where it leads (`key`), is a secret file."""
    secrets = ctx.secret_files
    if is_dir:
        secrets.check(key, is_dir=True)
    else:
        secrets.check(lexical_rel(given), key)


def load_text(ctx: ToolContext, rel: str) -> tuple[str, str]:
    """(normalized path, current text) of a file in the run's view, refusing huge, binary, secret and unsafe files."""
    overlay = ctx.overlay
    key = overlay.normalize(rel)
    refuse_secret(ctx, rel, key)
    if key == ".":
        raise ToolError(f"{rel!r} is the workspace root, a directory; use list_files to see its contents")
    if overlay.change_kind(key) is None and not overlay.is_dir(key):
        path = overlay.abspath(key)
        try:
            st = require_regular_file(path, key)
        except FileNotFoundError:
            raise ToolError(f"{key}: file not found; use list_files to see which files exist") from None
        if st.st_size > ctx.max_file_size:
            raise FileTooLargeError(
                f"{key}: is {st.st_size:,} bytes, over the {ctx.max_file_size:,}-byte limit for reading; "
                "use search_text to find the lines you need"
            )
    try:
        return key, overlay.read_text(key)
    except IsADirectoryError:
        raise ToolError(f"{key}: is a directory, not a file; use list_files with path={key!r}") from None


def number_lines(lines: list[str], first: int, max_chars: int) -> str:
    """'N: text' lines starting at line `first`; overlong lines are cut with a note."""
    width = len(str(first + len(lines) - 1)) if lines else 1
    out = []
    for i, line in enumerate(lines, start=first):
        if len(line) > max_chars:
            line = line[:max_chars] + f" … [line cut at {max_chars} of {len(line)} chars]"
        out.append(f"{i:>{width}}: {line}" if line else f"{i:>{width}}:")
    return "\n".join(out)
