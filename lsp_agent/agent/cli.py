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

from lsp_agent.agent.events import AgentEvent
from lsp_agent.agent.permission_store import PREFIX_TOOLS, command_argv, command_prefix
from lsp_agent.agent.sanitize import clean_text

if TYPE_CHECKING:
    from lsp_agent.agent.run import AgentRun, RunResult
    from lsp_agent.agent.session import Session
    from lsp_agent.config import Settings
    from lsp_agent.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

COLORS = {
    "thought": "36",  # cyan
    "tool_call": "33",  # yellow
    "tool_ok": "32",  # green
    "tool_failed": "31",  # red
    "error": "31",
    "plan": "35",  # magenta
    "subtask": "35",
    "dim": "2",
    "bold": "1",
}


class Printer:
    """An event sink that prints a run compactly; colour only on a terminal."""

    def __init__(self, out: TextIO, color: bool) -> None:
        self.out = out
        self.color = color
        self.errors_shown: set[str] = set()  # final error messages already printed (the report skips them)
        self._last_retry = ""

    def paint(self, text: str, style: str) -> str:
        """Text in an ANSI colour when colour is on."""
        return f"\033[{COLORS[style]}m{text}\033[0m" if self.color else text

    def write(self, text: str) -> None:
        """Print a line; text the terminal cannot encode (lone surrogates, say) is shown escaped, never raised."""
        print(clean_text(text), file=self.out, flush=True)

    def __call__(self, event: AgentEvent) -> None:
        kind = event.kind
        if kind in ("usage", "proposal", "done"):
            return  # shown once at the end
        if kind == "error" and event.data.get("retrying"):
            self.write(self.paint(self._retry_text(event), "dim"))
            return
        if kind == "error":
            self.errors_shown.add(str(event.data.get("message")))
        text = event.to_text()
        if kind == "thought":
            text = self.paint(text, "thought")
        elif kind == "tool_call":
            text = self.paint(text, "tool_call")
        elif kind == "tool_result":
            text = self.paint(text, "tool_ok" if event.data.get("ok") else "tool_failed")
        elif kind in ("error", "permission") and not event.data.get("retrying"):
            text = self.paint(text, "error" if kind == "error" else "dim")
        elif kind in ("plan", "subtask"):
            text = self.paint(text, kind)
        elif kind in ("start", "compaction"):
            text = self.paint(text, "dim")
        self.write(text)

    def _retry_text(self, event: AgentEvent) -> str:
        """A retry notice; the reason is shown once, later retries for the same reason only say when."""
        data = event.data
        reason = str(data.get("reason") or data.get("message"))
        when = f"retry {data.get('attempt', '?')} in {float(data.get('delay') or 0):.1f}s"
        if reason == self._last_retry:
            return f"  {when} (same error)"
        self._last_retry = reason
        return f"model request failed: {reason}; {when}"


def setup_logging(level: str | None, log_file: str | None) -> None:
    """Log to a file or stderr at the requested level (default WARNING)."""
    handler: logging.Handler
    handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.set_name("lsp-agent-cli")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "lsp-agent-cli"]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(getattr(logging, (level or "WARNING").upper(), logging.WARNING))
    for noisy in ("LiteLLM", "litellm", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))


def build_registry(settings: Settings, args: argparse.Namespace) -> ToolRegistry:
    """The tools for this run: the built-ins; callers (MCP, codeact) register more on the returned registry."""
    from lsp_agent.tools.registry import default_registry

    registry = default_registry()
    for extend in REGISTRY_EXTENSIONS:
        extend(registry, settings, args)
    return registry


def _add_mcp_tools(registry: ToolRegistry, settings: Settings, args: argparse.Namespace) -> None:
    """Tools of the MCP servers in the config files, settings and --mcp-server flags (servers stop at exit)."""
    from lsp_agent.mcp.cli import add_mcp_tools

    add_mcp_tools(registry, settings, args)


def _add_exec_tools(registry: ToolRegistry, settings: Settings, args: argparse.Namespace) -> None:
    """run_python, run_command and run_tests (permission "exec": asked for, or granted by --allow-exec)."""
    from lsp_agent.tools.exec_tools import add_exec_tools

    add_exec_tools(registry, settings)


# Callables (registry, settings, args) -> None that add tools (e.g. MCP servers from --mcp-server).
REGISTRY_EXTENSIONS: list[Any] = [_add_mcp_tools, _add_exec_tools]


def open_index(root: Path, settings: Settings, out: TextIO) -> Any:
    """The workspace index, refreshed; None when the index is unavailable (search_code then says so)."""
    try:
        from lsp_agent.index import IndexConfig, WorkspaceIndex
        from lsp_agent.workspace.secrets import secret_files_of
    except ImportError:
        return None
    try:
        config = IndexConfig(
            max_file_size=settings.max_file_size,
            exclude=list(settings.index_exclude) + secret_files_of(settings).index_excludes(),
            embeddings=settings.embeddings,
        )
        index = WorkspaceIndex(root, config)
        index.refresh()
        return index
    except Exception as exc:  # noqa: BLE001 - the agent still works without the index
        print(
            f"warning: workspace index unavailable ({exc}); search_code and find_symbol are disabled",
            file=out,
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
        "profile",
    )
    return {name: getattr(args, name, None) for name in names if getattr(args, name, None) is not None}


def run_ask(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent ask`; returns the exit status."""
    from lsp_agent.config import ModelNotConfigured, export_provider_keys, load_settings

    setup_logging(getattr(args, "log_level", None), getattr(args, "log_file", None))
    _tolerant_output()
    out = sys.stdout
    task = (getattr(args, "task", None) or getattr(args, "task_flag", None) or "").strip()
    if not task:
        print(
            'error: no task given; usage: lsp-agent ask "what the agent should do" [--repo PATH]',
            file=sys.stderr,
        )
        return 2
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    if not root.is_dir():
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return 2
    export_provider_keys(root)
    settings, errors = load_settings(root, flags=_flags(args))
    for error in errors:
        print(f"warning: {error}", file=sys.stderr)
    if not settings.model:
        print(f"error: {ModelNotConfigured('cli')}", file=sys.stderr)
        return 2
    color = out.isatty() and not getattr(args, "no_color", False) and not os.environ.get("NO_COLOR")
    printer = Printer(out, color)
    session = _load_session(getattr(args, "session", None))
    registry = build_registry(settings, args)
    if getattr(args, "allow_exec", False):
        asker = _allow_all
    elif sys.stdin.isatty():
        asker = terminal_asker(out)
    else:
        asker = None
    # litellm takes seconds to import: do it while the index refreshes.
    from lsp_agent.agent.model import get_litellm

    threading.Thread(target=get_litellm, name="import-litellm", daemon=True).start()
    index = open_index(root, settings, sys.stderr)
    from lsp_agent.agent.run import AgentRun

    run = AgentRun(
        task, settings, root, sink=printer, registry=registry, index=index, session=session, permission=asker
    )
    try:
        result = _run_with_interrupt(run)
    finally:
        if index is not None:
            index.close()
    status = _report(
        result, printer, root, apply=getattr(args, "apply", False), run_id=run.run_id, session=session
    )
    if session is not None:
        from lsp_agent.agent.session import sessions_dir

        try:
            session.save(sessions_dir())
        except OSError as exc:
            print(f"warning: could not save session {session.id}: {exc}", file=sys.stderr)
    return status


def _tolerant_output() -> None:
    """Let stdout and stderr escape what the terminal cannot encode instead of raising mid-run."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream
                pass


def _load_session(session_id: str | None) -> Session | None:
    """The persisted session `session_id` (a new one if it does not exist yet)."""
    if not session_id:
        return None
    from lsp_agent.agent.session import Session, sessions_dir

    return Session.load(sessions_dir(), session_id)


def _run_with_interrupt(run: AgentRun) -> RunResult:
    """Run the agent; Ctrl-C cancels the run cleanly (the result is still reported)."""

    async def main() -> RunResult:
        loop = asyncio.get_running_loop()

        def interrupt() -> None:
            print("\ncancelling the run (Ctrl-C again to quit at once)", file=sys.stderr, flush=True)
            run.cancel()
            loop.remove_signal_handler(signal.SIGINT)

        try:
            loop.add_signal_handler(signal.SIGINT, interrupt)
        except (NotImplementedError, RuntimeError):
            pass
        return await run.run()

    return asyncio.run(main())


def _report(
    result: RunResult, printer: Printer, root: Path, *, apply: bool, run_id: str, session: Session | None
) -> int:
    """Print the answer, the diff and the summary line; apply the proposal if asked. Returns the exit status."""
    out = printer.out
    print("", file=out)
    if result.error and result.error not in printer.errors_shown:
        printer.write(printer.paint(f"error: {result.error}", "error"))
    if result.answer:
        printer.write(printer.paint("Answer:", "bold"))
        printer.write(result.answer)
    proposal = result.proposal
    status = 0 if result.success else 1
    if proposal is not None:
        print("", file=out)
        print(printer.paint(f"Proposed changes ({len(proposal.changes)} file(s)):", "bold"), file=out)
        print(_colored_diff(proposal.unified_diff(), printer), file=out)
        from lsp_agent.workspace.proposal import check_syntax

        for problem in check_syntax(proposal):
            print(
                printer.paint(f"warning: Python syntax error in the proposal: {problem}", "error"), file=out
            )
        if apply and not result.success:
            print(f"not applied: the run did not complete ({result.stop_reason})", file=out)
            if session is not None:
                session.record(
                    f"the proposal of run {run_id} was not applied because the run did not complete"
                )
        elif apply:
            errors = proposal.apply_to_disk(root)
            if errors:
                for error in errors:
                    print(printer.paint(f"not applied: {error}", "error"), file=out)
                status = 1
            else:
                print(f"applied {len(proposal.changes)} file(s) to {root}", file=out)
            if session is not None:
                outcome = "applied" if not errors else "could not fully apply"
                session.record(f"user {outcome} the proposal of run {run_id}")
        else:
            print("(not applied; re-run with --apply to write these changes)", file=out)
            if session is not None:
                session.record(f"the proposal of run {run_id} was shown but not applied")
    summary = (
        f"{'success' if result.success else 'failed'} ({result.stop_reason}) | iterations {result.iterations} | "
        f"messages {result.messages} | tokens {result.prompt_tokens} in / {result.completion_tokens} out | "
        f"cost ${result.cost:.4f}"
    )
    print(printer.paint(summary, "bold"), file=out)
    return status


def _colored_diff(diff: str, printer: Printer) -> str:
    """A unified diff with + lines green and - lines red on a terminal."""
    if not printer.color:
        return diff.rstrip("\n")
    lines = []
    for line in diff.rstrip("\n").splitlines():
        if line.startswith(("+++", "---")):
            lines.append(printer.paint(line, "bold"))
        elif line.startswith("+"):
            lines.append(printer.paint(line, "tool_ok"))
        elif line.startswith("-"):
            lines.append(printer.paint(line, "tool_failed"))
        elif line.startswith("@@"):
            lines.append(printer.paint(line, "thought"))
        else:
            lines.append(line)
    return "\n".join(lines)
