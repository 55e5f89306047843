"""The built-in tool set: names, descriptions and JSON schemas (part of lsp-agent's documented interface)."""

from __future__ import annotations

from lsp_agent.tools import files, search
from lsp_agent.tools.registry import Tool

_PATH = "Path relative to the workspace root, e.g. 'src/app.py'."


def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def builtin_tools() -> list[Tool]:
    """The ten built-in tools, in the order they are offered to the model."""
    return [
        Tool(
            "list_files",
            "List files and directories (directories end with '/'), sorted, honouring .gitignore. Without a "
            "pattern, lists the direct entries of `path`; with a glob pattern ('*.py', 'src/**/*.ts', "
            "'**/test_*.py'; '**' spans directories), lists every match below `path`. Includes files created "
            "in this run and hides files deleted in it.",
            _schema(
                {
                    "pattern": {"type": "string", "description": "Glob relative to `path`, e.g. '**/*.py'."},
                    "path": {
                        "type": "string",
                        "description": "Directory to list (default: the workspace root).",
                    },
                },
                [],
            ),
            files.list_files,
        ),
        Tool(
            "read_file",
            "Read a text file as numbered lines ('N: text', numbered from 1), optionally only start_line..end_line "
            "(inclusive). Long files are truncated with a marker telling how many lines remain; read on with "
            "start_line. Shows the edits made in this run.",
            _schema(
                {
                    "path": {"type": "string", "description": _PATH},
                    "start_line": {
                        "type": "integer",
                        "description": "First line to read (1-based, default 1).",
                    },
                    "end_line": {
                        "type": "integer",
                        "description": "Last line to read, inclusive (default: end of file; -1 also means the end).",
                    },
                },
                ["path"],
            ),
            files.read_file,
        ),
        Tool(
            "search_text",
            "Search file contents line by line. Returns 'path:line:snippet' lines (snippets cut at 100 chars). "
            "Literal text by default; regex=true for a Python regular expression. Case-insensitive unless the "
            "pattern has capitals or case_sensitive is given.",
            _schema(
                {
                    "pattern": {"type": "string", "description": "Text (or regular expression) to find."},
                    "path": {
                        "type": "string",
                        "description": "File or directory to search (default: everything).",
                    },
                    "regex": {"type": "boolean", "description": "Treat pattern as a regular expression."},
                    "case_sensitive": {"type": "boolean", "description": "Match case exactly."},
                },
                ["pattern"],
            ),
            search.search_text,
        ),
        Tool(
            "search_code",
            "Find the code most relevant to a description or identifiers (semantic/keyword index over functions, "
            "classes and blocks). Returns ranked chunks with paths and line ranges.",
            _schema(
                {
                    "query": {
                        "type": "string",
                        "description": "What you are looking for, e.g. 'parse config file'.",
                    },
                    "top_k": {
                        "type": "integer",
                        "description": "How many results (default 10).",
                        "minimum": 1,
                        "maximum": 50,
                    },
                },
                ["query"],
            ),
            search.search_code,
        ),
        Tool(
            "find_symbol",
            "Find where a function, class, method or variable is defined and referenced (name or qualified name "
            "such as 'Parser.parse').",
            _schema({"name": {"type": "string", "description": "Symbol name."}}, ["name"]),
            search.find_symbol,
        ),
        Tool(
            "get_file_info",
            "Size, line count, type, language and whether a file was created/modified/deleted in this run.",
            _schema({"path": {"type": "string", "description": _PATH}}, ["path"]),
            files.get_file_info,
        ),
        Tool(
            "write_file",
            "Create a file or replace its whole content (parent directories are created). Prefer edit_file for "
            "changes to existing files. Changes are proposed to the user, who applies them.",
            _schema(
                {
                    "path": {"type": "string", "description": _PATH},
                    "content": {"type": "string", "description": "The complete new content of the file."},
                },
                ["path", "content"],
            ),
            files.write_file,
        ),
        Tool(
            "edit_file",
            "Replace old_text with new_text in a file. old_text must match the current file exactly (including "
            "indentation, without read_file's line numbers) and occur exactly once; include a few surrounding "
            "lines to make it unique. On failure the closest candidate lines are shown.",
            _schema(
                {
                    "path": {"type": "string", "description": _PATH},
                    "old_text": {"type": "string", "description": "Exact text to replace (must occur once)."},
                    "new_text": {"type": "string", "description": "Replacement text."},
                },
                ["path", "old_text", "new_text"],
            ),
            files.edit_file,
        ),
        Tool(
            "delete_file",
            "Delete a file (proposed to the user like every other change).",
            _schema({"path": {"type": "string", "description": _PATH}}, ["path"]),
            files.delete_file,
        ),
        Tool(
            "task_complete",
            "Call when the task is done, with a summary of what you found or changed. This ends the run.",
            _schema(
                {"summary": {"type": "string", "description": "What was done, for the user."}}, ["summary"]
            ),
            files.task_complete,
        ),
    ]
