"""lsp-agent: a coding agent for any LSP editor. Index and search a workspace, ask the agent, or serve LSP."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Callable, Sequence

from lsp_agent import __version__
from lsp_agent.cli import acp, apply, ask, config, conversation, index, permissions, replay, rewind, serve

# Each command module adds its subcommand(s) with add_parser(commands) and sets args.handler to the function
# that runs it. A new command is a module in this package with those two parts, and one more entry here.
COMMANDS = (index, ask, apply, conversation, rewind, permissions, config, serve, acp, replay)


def build_parser() -> argparse.ArgumentParser:
    """The full argument tree: each command module adds its own subcommands."""
    parser = argparse.ArgumentParser(prog="lsp-agent", description=__doc__)
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `lsp-agent` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`lsp-agent search ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def run(body: Callable[[], int] = main) -> None:
    """Console entry: body() (the CLI; a test's scenario server), then exit without tearing down the interpreter
    (litellm's modules take ~1.5 s)."""
    try:
        code = body()
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
