"""`lsp-agent ask TASK`: run the agent headless in a terminal, print it as it goes, optionally apply the result."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lsp_agent.agent.consent.store import PREFIX_TOOLS, command_argv, command_prefix
from lsp_agent.cli.apply import apply_proposal, remember_proposal
from lsp_agent.cli.common import add_model_flags, add_provider_flag, provider_model
from lsp_agent.cli.conversation import mention_context, prepare_ask, remember_session
from lsp_agent.cli.folders import FolderIndexes, cli_access, cli_router
from lsp_agent.cli.folders import add_flag as add_folder_flag
from lsp_agent.cli.printer import Printer, colored_diff
from lsp_agent.logs import setup_logging

if TYPE_CHECKING:
    from lsp_agent.agent.consent.permissions import PermissionAsker
    from lsp_agent.agent.conversation.session import Session
    from lsp_agent.agent.loop.run import AgentRun, RunResult
    from lsp_agent.config import Settings
    from lsp_agent.index import WorkspaceIndex
    from lsp_agent.mcp.manager import McpManager
    from lsp_agent.workspace.folders import FolderAccess

log = logging.getLogger(__name__)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`ask TASK`."""
    p = commands.add_parser("ask", help="run the agent on a task from the terminal")
    p.add_argument("task", nargs="?", help="what the agent should do")
    p.add_argument("--task", dest="task_flag", help=argparse.SUPPRESS)
    p.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    add_model_flags(p)
    add_provider_flag(p)
    p.add_argument(
        "--tool-calling", choices=["auto", "native", "prompt"], help="tool calling mode (default auto)"
    )
    p.add_argument("--style", choices=["react", "codeact"], help="run style (default react)")
    p.add_argument("--plan", action="store_true", default=None, help="plan subtasks first, then run them")
    p.add_argument("--max-iterations", type=int, help="iteration limit (default 30)")
    p.add_argument("--token-budget", type=int, metavar="TOKENS", help="stop the run past this many tokens")
    p.add_argument(
        "--cost-budget",
        type=float,
        metavar="USD",
        help="stop the run past this cost (env LSP_AGENT_COST_BUDGET)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        metavar="SECONDS",
        help="limit on each model request as a whole, streamed or not (default 120)",
    )
    p.add_argument("--max-tokens", type=int, help="most tokens one model reply may have (default 2048)")
    p.add_argument(
        "--profile",
        choices=["auto", "full", "small"],
        help="prompt and tool profile (default auto: small for small models)",
    )
    p.add_argument("--apply", action="store_true", help="write the proposal to disk when the run ends")
    p.add_argument(
        "--apply-failing",
        action="store_true",
        help="with --apply: write the proposal even when its own checks (tests, syntax) fail",
    )
    add_folder_flag(p)
    p.add_argument(
        "--allow-exec", action="store_true", help="allow code execution and MCP tools without asking"
    )
    p.add_argument("--mcp-server", action="append", default=[], help="MCP server URL or command (repeatable)")
    p.add_argument("--transcript", help="write a JSONL transcript of the run to this file")
    p.add_argument("--session", help="session id: follow-up tasks in one session see earlier exchanges")
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="follow up on the last ask in this repo",
    )
    p.add_argument(
        "--retry", action="store_true", help="run the last ask of the session (or this repo) again"
    )
    p.add_argument("--no-color", action="store_true", help="plain output")
    p.set_defaults(handler=run_ask)


def open_index(root: Path, settings: Settings, err: TextIO) -> WorkspaceIndex | None:
    """The workspace index, refreshed, with its repo map; None when unavailable (search_code then says so)."""
    try:
        from lsp_agent.assembly import open_index as open_run_index

        return open_run_index(root, settings)
    except Exception as exc:  # noqa: BLE001 - the agent still works without the index
        print(
            f"warning: workspace index unavailable ({exc}); search_code and find_symbol are disabled",
            file=err,
        )
        return None


# Terminal keys for the four answers (the editors' "Allow once", "Allow always", "Reject once", "Reject always").
TERMINAL_ANSWERS = {
    "y": "allow_once",
    "yes": "allow_once",
    "a": "allow_always",
    "always": "allow_always",
    "n": "reject_once",
    "no": "reject_once",
    "r": "reject_always",
    "never": "reject_always",
}


def terminal_asker(out: TextIO) -> Any:
    """A PermissionAsker on the terminal: [y] allow once, [a] allow always, [n] reject once, [r] reject always."""

    async def ask(tool: str, arguments: dict, reason: str) -> str:
        preview = ", ".join(f"{k}={str(v)[:80]!r}" for k, v in arguments.items())
        scope = ""
        if tool in PREFIX_TOOLS and (argv := command_argv(arguments)):
            scope = f' ("always" covers commands starting with: {" ".join(command_prefix(argv))})'
        question = (
            f"\nPermission: {tool}({preview}) {reason}.{scope}\n"
            "[y] allow once / [a] allow always / [N] reject once / [r] reject always: "
        )
        try:
            answer = await asyncio.to_thread(_read_answer, question, out)
        except (EOFError, OSError):
            return "dismissed"
        if not answer:  # end of input: nobody is there to answer
            return "dismissed"
        return TERMINAL_ANSWERS.get(answer.strip().lower(), "reject_once")

    return ask


def _read_answer(question: str, out: TextIO) -> str:
    """One line from stdin after printing the question."""
    print(question, end="", file=out, flush=True)
    return sys.stdin.readline()


async def _allow_all(tool: str, arguments: dict, reason: str) -> str:
    """--allow-exec: every guarded tool is granted for the session."""
    return "session"


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line."""
    names = (
        "model",
        "api_base",
        "api_key",
        "tool_calling",
        "style",
        "plan",
        "max_iterations",
        "transcript",
        "request_timeout",
        "max_tokens",
        "token_budget",
        "cost_budget",
        "profile",
    )
    return {name: getattr(args, name, None) for name in names if getattr(args, name, None) is not None}


def run_ask(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent ask`; returns the exit status."""
    setup_logging(getattr(args, "log_level", None), getattr(args, "log_file", None))
    _tolerant_output()
    out = sys.stdout
    task = (getattr(args, "task", None) or getattr(args, "task_flag", None) or "").strip()
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    if not root.is_dir() and task:
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return 2
    try:
        prepared = prepare_ask(args, root, task)
        folders = cli_access(root, list(getattr(args, "read_folder", None) or []), prepared.task)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    task, session = prepared.task, prepared.session
    settings = _settings(args, root)
    if settings is None:
        return 2
    # litellm takes seconds to import: it loads while the index refreshes and the MCP servers start.
    from lsp_agent.agent.model.client import get_litellm

    threading.Thread(target=get_litellm, name="import-litellm", daemon=True).start()
    color = out.isatty() and not getattr(args, "no_color", False) and not os.environ.get("NO_COLOR")
    printer = Printer(out, color)
    if prepared.note:
        printer.write(printer.paint(prepared.note, "dim"))
    allow_exec = bool(getattr(args, "allow_exec", False))
    asker = _allow_all if allow_exec else terminal_asker(out) if sys.stdin.isatty() else None
    from lsp_agent.cli.mcp import open_mcp

    mcp = open_mcp(settings, root, list(getattr(args, "mcp_server", None) or []), sys.stderr)
    try:
        options = {"session": session, "mcp": mcp, "allow_exec": allow_exec, "folders": folders}
        run_id, result = asyncio.run(_ask(task, settings, root, printer, asker, **options))
    finally:
        if mcp is not None:
            mcp.close()
    remember_proposal(root, run_id, task, result, sys.stderr)  # for `lsp-agent apply`
    hint = f"(session {session.id}: follow up with `ask --continue`, retry with `ask --retry`)"
    printer.write(printer.paint(hint, "dim"))
    apply = "failing" if getattr(args, "apply_failing", False) else bool(getattr(args, "apply", False))
    status = _report(  # its summary line is the last line of the output
        result, printer, root, apply=apply, run_id=run_id, session=session
    )
    remember_session(root, session, settings)  # with what _report recorded (applied or not)
    return status


def _settings(args: argparse.Namespace, root: Path) -> Settings | None:
    """The run's settings (flags, --llm-provider, files, environment); None after saying why there is no model."""
    from lsp_agent.config import ModelNotConfigured
    from lsp_agent.settings_sources import export_provider_keys, load_settings

    export_provider_keys(root)
    settings, errors = load_settings(root, flags=_flags(args))
    for error in errors:
        print(f"warning: {error}", file=sys.stderr)
    try:
        model = provider_model(
            getattr(args, "llm_provider", None), getattr(args, "model", None), settings.model
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    settings = settings.replace(model=model) if model else settings
    if not settings.model:
        print(f"error: {ModelNotConfigured('cli')}", file=sys.stderr)
        return None
    return settings


def _tolerant_output() -> None:
    """Let stdout and stderr escape what the terminal cannot encode instead of raising mid-run."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream
                pass


async def _ask(
    task: str,
    settings: Settings,
    root: Path,
    printer: Printer,
    asker: PermissionAsker | None,
    *,
    session: Session | None,
    mcp: McpManager | None,
    allow_exec: bool,
    folders: FolderAccess | None = None,
) -> tuple[str, RunResult]:
    """(run id, result): the index opened, the run built by the shared assembly, run to its end."""
    from lsp_agent.assembly import build_run

    index = await asyncio.to_thread(open_index, root, settings, sys.stderr)
    folder_indexes = FolderIndexes(settings)
    try:
        context = mention_context(task, root, index, settings, printer, folders)  # @file, @symbol in the task
        run = await build_run(
            task,
            settings,
            root,
            sink=printer,
            asker=asker,
            index=index,
            session=session,
            context=context,
            mcp=mcp,
            allow_external=allow_exec,
            folders=cli_router(folders, folder_indexes) if folders is not None else None,
            stream_text=printer.stream_live(settings.live_text_interval),
        )
        if mcp is not None:
            from lsp_agent.cli.mcp import report_tools

            report_tools(mcp, sys.stderr)
        return run.run_id, await _run_with_interrupt(run)
    finally:
        folder_indexes.close()
        if index is not None:
            index.close()


async def _run_with_interrupt(run: AgentRun) -> RunResult:
    """Run the agent; Ctrl-C cancels the run cleanly (the result is still reported)."""
    loop = asyncio.get_running_loop()

    def interrupt() -> None:
        print("\ncancelling the run (Ctrl-C again to quit at once)", file=sys.stderr, flush=True)
        run.cancel()
        loop.remove_signal_handler(signal.SIGINT)

    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        return await run.run()
    finally:
        loop.remove_signal_handler(signal.SIGINT)


EXIT_CHECKS_FAILED = 3  # the run finished, but its proposal fails its own checks (tests, syntax)


def _report(
    result: RunResult,
    printer: Printer,
    root: Path,
    *,
    apply: bool | str,
    run_id: str,
    session: Session | None,
) -> int:
    """Print the answer, the diff and the summary line; apply the proposal if asked (`apply` "failing": even when
    its checks fail). Returns the exit status."""
    out = printer.out
    print("", file=out)
    if result.error and result.error not in printer.errors_shown:
        printer.write(printer.paint(f"error: {result.error}", "error"))
    if result.answer and result.stop_reason != "cancelled":  # a cancelled run's last thought is no answer
        printer.write(printer.paint("Answer:", "bold"))
        printer.write(result.answer)
    proposal = result.proposal
    status = {"success": 0, "checks_failed": EXIT_CHECKS_FAILED, "cancelled": 130}.get(result.status, 1)
    applied_words = ""
    if proposal is not None:
        print("", file=out)
        print(printer.paint(f"Proposed changes ({len(proposal.changes)} file(s)):", "bold"), file=out)
        print(colored_diff(proposal.unified_diff(), printer), file=out)
        for check in result.checks_failed:
            print(printer.paint(f"warning: the proposal fails its own checks: {check}", "error"), file=out)
        applied_words, written = _apply_or_not(result, root, out, apply=apply, run_id=run_id, session=session)
        status = status or (0 if written else 1)
    words = {"success": "success", "checks_failed": "checks failed"}.get(result.status, "failed")
    summary = (
        f"{words} ({result.stop_reason}) | iterations {result.iterations} | "
        f"messages {result.messages} | tokens {result.prompt_tokens} in / {result.completion_tokens} out | "
        f"cost ${result.cost:.4f}{applied_words}"
    )
    print(printer.paint(summary, "bold"), file=out)
    return status


def _apply_or_not(
    result: RunResult, root: Path, out: TextIO, *, apply: bool | str, run_id: str, session: Session | None
) -> tuple[str, bool]:
    """Write the proposal when asked and allowed; (words for the summary line, False when asked but not written)."""
    proposal = result.proposal
    assert proposal is not None
    refusal = ""
    if apply and result.status == "checks_failed" and apply != "failing":
        refusal = "its own checks fail"
        print("not applied: the proposal fails its own checks (`--apply-failing` writes it anyway)", file=out)
    elif apply and not result.success and result.status != "checks_failed":
        refusal = "the run did not complete"
        print(f"not applied: the run did not complete ({result.stop_reason})", file=out)
    if refusal:
        if session is not None:
            session.record(f"the proposal of run {run_id} was not applied because {refusal}")
        return " | not applied (`lsp-agent apply` writes it anyway)", False
    if apply:
        applied, words = apply_proposal(root, proposal, run_id, out)
        if session is not None:
            outcome = "applied" if applied else "could not fully apply"
            session.record(f"user {outcome} the proposal of run {run_id}")
        return f" | {words}", applied
    print("(not applied; `lsp-agent apply` writes these changes, `lsp-agent undo` reverts them)", file=out)
    if session is not None:
        session.record(f"the proposal of run {run_id} was shown but not applied")
    return "", True
