"""lsp-agent: a coding agent for any LSP editor. Index and search a workspace, ask the agent, or serve LSP."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Sequence

from lsp_agent import __version__

LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]


def _add_common_model_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that may talk to a model."""
    p.add_argument("--model", help="litellm model string, e.g. openai/gpt-4o-mini (env LSP_AGENT_MODEL)")
    p.add_argument("--api-base", help="API base URL, e.g. http://127.0.0.1:8000/v1 (env LSP_AGENT_API_BASE)")
    p.add_argument("--api-key", help="API key (env LSP_AGENT_API_KEY or the provider's usual variable)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None, help="logging level (default WARNING)")
    p.add_argument("--log-file", help="write logs to this file")


def build_parser() -> argparse.ArgumentParser:
    """The full argument tree; handlers live in the rooms and are imported lazily."""
    parser = argparse.ArgumentParser(prog="lsp-agent", description=__doc__)
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("index", help="build or refresh the workspace index")
    p.add_argument("path", nargs="?", default=".", help="workspace root (default: current directory)")
    p.add_argument("--embeddings", help="embedding backend: none | local | litellm model string")
    p.add_argument("--max-file-size", type=int, help="skip files larger than this many bytes (default 1 MB)")
    p.add_argument(
        "--exclude", action="append", default=[], help="extra gitignore-style pattern (repeatable)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.set_defaults(handler=("lsp_agent.index.cli", "run_index"))

    p = sub.add_parser("search", help="search the workspace index")
    p.add_argument("query", nargs="?", help="what to look for (natural language, identifiers; - reads stdin)")
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.add_argument("--top-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.add_argument("--queries", help="JSON lines file of {id, query}; prints one JSON line per query")
    p.add_argument(
        "--files", action="store_true", help="rank files (where to look for a task or an issue report)"
    )
    p.add_argument("--embeddings", help="embedding backend: none | local | litellm model string")
    p.add_argument("--max-file-size", type=int, help="skip files larger than this many bytes (default 1 MB)")
    p.add_argument(
        "--exclude", action="append", default=[], help="extra gitignore-style pattern (repeatable)"
    )
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.set_defaults(handler=("lsp_agent.index.cli", "run_search"))

    p = sub.add_parser("ask", help="run the agent on a task from the terminal")
    p.add_argument("task", nargs="?", help="what the agent should do")
    p.add_argument("--task", dest="task_flag", help=argparse.SUPPRESS)
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    _add_common_model_flags(p)
    p.add_argument(
        "--tool-calling", choices=["auto", "native", "prompt"], help="tool calling mode (default auto)"
    )
    p.add_argument("--style", choices=["react", "codeact"], help="run style (default react)")
    p.add_argument("--plan", action="store_true", default=None, help="plan subtasks first, then run them")
    p.add_argument("--max-iterations", type=int, help="iteration limit (default 30)")
    p.add_argument(
        "--profile",
        choices=["auto", "full", "small"],
        help="prompt and tool profile (default auto: small for small models)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        metavar="SECONDS",
        help="limit on each model request as a whole, streamed or not (default 120)",
    )
    p.add_argument("--apply", action="store_true", help="write the proposal to disk when the run ends")
    p.add_argument(
        "--allow-exec", action="store_true", help="allow code execution and MCP tools without asking"
    )
    p.add_argument("--mcp-server", action="append", default=[], help="MCP server URL or command (repeatable)")
    p.add_argument("--transcript", help="write a JSONL transcript of the run to this file")
    p.add_argument("--session", help="session id: follow-up tasks in one session see earlier exchanges")
    p.add_argument("--no-color", action="store_true", help="plain output")
    p.set_defaults(handler=("lsp_agent.agent.cli", "run_ask"))

    p = sub.add_parser("permissions", help='list or revoke remembered "always" permission answers')
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="show the remembered answers of a workspace")
    listing.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = actions.add_parser("revoke", help="forget a remembered answer (so the agent asks again)")
    revoke.add_argument("rule", nargs="?", help='the rule as `list` shows it, e.g. "run_command: pytest -q"')
    revoke.add_argument("--all", action="store_true", help="forget every remembered answer of the workspace")
    revoke.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.set_defaults(handler=("lsp_agent.agent.permission_cli", "run_permissions"))

    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdio (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p.add_argument("--log-level", choices=LOG_LEVELS, default=None)
    p.add_argument("--log-file", help="write logs to this file")
    p.set_defaults(handler=("lsp_agent.server.cli", "run_serve"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `lsp-agent` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    module_name, func_name = args.handler
    import importlib

    handler = getattr(importlib.import_module(module_name), func_name)
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`lsp-agent search ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def run() -> None:
    """Console entry: main(), then exit without tearing down the interpreter (litellm's modules take ~1.5 s)."""
    try:
        code = main()
    except SystemExit as exc:  # argparse errors, pygls's exit notification
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    threading._shutdown()  # as at normal exit: executors' exit hooks, then non-daemon threads joined
    atexit._run_exitfuncs()  # our cleanups (sandboxes, MCP servers), logging.shutdown, litellm's flushes
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed by the server's transport, or a broken pipe
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
