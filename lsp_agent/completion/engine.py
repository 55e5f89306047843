"""The inline completion engine: one suggestion per request, keeping up with typing.

A request waits out the debounce, then asks the model with a streamed request; a newer request (or an edit of the
document) cancels the one in flight, which closes its HTTP stream so the model server stops. A suggestion the user
types into is answered from the cache. A model that fails is said once and rested for a few seconds; every failure
ends the request quietly (no suggestion, no error).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.completion.cache import SuggestionCache
from lsp_agent.completion.context import ContextRequest, gather, line_reader, relative_path
from lsp_agent.completion.fim_client import (
    CompletionModelError,
    FimClient,
    FimRequest,
    FimResult,
    import_openai,
)
from lsp_agent.completion.monitor import Monitor
from lsp_agent.completion.postprocess import SPECIAL_TOKENS, Cursor, block_end, finish, without_fence
from lsp_agent.completion.privacy import PromptPrivacy
from lsp_agent.completion.prompt import (
    PREFIX_LINES,
    SUFFIX_LINES,
    Snippet,
    build_prompt,
    chat_messages,
    context_comment,
    file_window,
    stops_for,
)
from lsp_agent.completion.recent_edits import RecentEdits
from lsp_agent.completion.setup import CompletionSetup, resolve_setup
from lsp_agent.completion.stats import CompletionStats
from lsp_agent.completion.syntax import forget_tree, language_and_quoting
from lsp_agent.config import Settings

log = logging.getLogger(__name__)

MODEL_REST_SECONDS = 5.0  # after a failure, no request for this long (keystrokes do not hammer a down server)
CONTEXT_WAIT_SECONDS = 0.5  # a slow index lookup is not waited for (it finishes for the next keystroke)
CONTEXT_TTL_SECONDS = 30.0
# the context is gathered once per band of this many lines: it stays the same (and so does the start of the
# prompt, which the model server keeps evaluated) while the user writes the next few lines
CONTEXT_BAND_LINES = 8


@dataclass
class CompletionRequest:
    """A request for a suggestion at a position of a document's text (`character`: an index into the line)."""

    key: str  # the document (its URI)
    path: Path
    root: Path | None
    text: str
    line: int
    character: int
    invoked: bool = False  # asked for explicitly (also inside strings and comments, no debounce)


@dataclass
class Suggestion:
    """The text to insert at the cursor."""

    text: str
    cached: bool = False
    unguided: str | None = None  # the model's first text, when the monitor corrected it


class CompletionEngine:
    """Suggestions for one editor session; `say(message, loud)` tells the user something once."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        index_for: Callable[[Path], Any],
        open_buffers: Callable[[], list[tuple[Path, str]]],
        say: Callable[[str, bool], None],
    ) -> None:
        self._settings = settings
        self._index_for = index_for
        self._open_buffers = open_buffers
        self._say = say
        self.cache = SuggestionCache()
        self.edits = RecentEdits()
        self.stats = CompletionStats()
        self.monitor = Monitor(self.stats)
        # the latency benchmark's foil: the context after the cursor, where each keystroke invalidates it
        self.stable_context_first = os.environ.get("LSP_AGENT_BENCH_CONTEXT_LAST") != "1"
        self._setup: tuple[Settings, CompletionSetup] | None = None
        self._client: tuple[tuple, FimClient] | None = None
        self._inflight: asyncio.Task | None = None
        self._latest = 0  # the number of the newest request
        self._model_down = False  # said so; cleared by the next answer
        self._contexts: dict[tuple, tuple[float, asyncio.Future]] = {}
        self._said: set[str] = set()
        self.privacy = PromptPrivacy()
        self._resting_until = 0.0

    # ----- set-up ---------------------------------------------------------------------------------------------

    def setup(self) -> CompletionSetup:
        """The completion model of the current settings (resolved again when they change)."""
        settings = self._settings()
        if self._setup is None or self._setup[0] is not settings:
            self._setup = (settings, resolve_setup(settings))
            self._said.clear()
            if self._setup[1].enabled and self._setup[1].template != "chat":
                threading.Thread(target=import_openai, name="lsp-agent-completion-warm", daemon=True).start()
        return self._setup[1]

    def _model_client(self, setup: CompletionSetup) -> FimClient:
        key = (setup.model, setup.api_base, setup.api_key, self._settings().request_timeout)
        if self._client is None or self._client[0] != key:
            if self._client is not None:  # the settings changed: the old connections go
                asyncio.ensure_future(self._client[1].close())
            self._client = (key, FimClient(setup.model or "", setup.api_base, setup.api_key, key[3]))
        return self._client[1]

    def _say_once(self, message: str, loud: bool) -> None:
        if message not in self._said:
            self._said.add(message)
            self._say(message, loud)

    def status(self) -> dict[str, Any]:
        """What lspAgent.status shows about inline completions."""
        setup = self.setup()
        out: dict[str, Any] = {"enabled": setup.enabled, "model": setup.model, "template": setup.template}
        out["modelDown"] = self._model_down  # the last model request failed (clients show it as paused)
        if setup.reason:
            out["reason"] = setup.reason
        return out | self.stats.to_dict()

    async def aclose(self) -> None:
        """Cancel the request in flight and close the model connections."""
        self.cancel_inflight()
        if self._client is not None:
            await self._client[1].close()

    # ----- edits ------------------------------------------------------------------------------------------------

    def note_change(self, key: str, path: Path | None, first: int, last: int, inserted_lines: int) -> None:
        """A document changed: the request in flight for it is stale, and the region is a recent edit."""
        if path is not None:
            self.edits.note(path, first, last, inserted_lines)
        self.cancel_inflight(key)

    def forget(self, key: str, path: Path | None) -> None:
        """A document was closed: its suggestions, parse and edited regions go."""
        self.cancel_inflight(key)
        self.cache.forget(key)
        forget_tree(key)
        if path is not None:
            self.edits.forget(path)

    def cancel_inflight(self, key: str | None = None) -> None:
        """Cancel the request in flight (only if it is for document `key`, when given)."""
        task = self._inflight
        if task is not None and (key is None or getattr(task, "completion_key", None) == key):
            task.cancel()  # a done task ignores it

    # ----- requests ---------------------------------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> Suggestion | None:
        """The suggestion at the request's position, or None (off, nothing fits, superseded, model failed)."""
        self.stats.requests += 1
        self._latest += 1
        ticket = self._latest  # requests are numbered as they arrive: a newer one supersedes this one
        setup = self.setup()
        if not setup.enabled:
            if setup.reason:
                self._say_once(setup.reason, setup.loud)
            return None
        rel = relative_path(request.path, request.root)
        if self.privacy.secrets(self._settings()).is_secret(rel):
            return None  # a secret file's text is never sent to a model
        raw_lines = request.text.split("\n")
        lines = [line.removesuffix("\r") for line in raw_lines]
        if request.line >= len(lines):
            return None
        offset = sum(len(x) + 1 for x in raw_lines[: request.line]) + request.character
        language, quoted = await asyncio.to_thread(
            language_and_quoting, rel, request.text, offset, request.key
        )
        if ticket != self._latest:
            return None  # a newer request came while this one parsed (threads finish in any order)
        if not request.invoked and quoted:
            self.stats.skipped_in_string_or_comment += 1
            return None
        current = lines[request.line]
        cursor = Cursor(
            current[: request.character], current[request.character :], tuple(lines[request.line + 1 :][:6])
        )
        before, after = request.text[:offset], request.text[offset:]
        cached = self.cache.lookup(request.key, before, after)
        if cached is not None and (text := finish(cached, cursor)):
            self.stats.cache_hits += 1
            self.stats.suggestions += 1
            return Suggestion(text, cached=True)
        self.cancel_inflight()
        task = asyncio.ensure_future(self._ask(request, setup, rel, lines, language, cursor))
        task.completion_key = request.key  # type: ignore[attr-defined]
        self._inflight = task
        try:
            text, unguided = await task
        except asyncio.CancelledError:
            current_task = asyncio.current_task()
            if current_task is not None and current_task.cancelling():
                task.cancel()
                raise  # the client cancelled this request ($/cancelRequest)
            return None  # superseded by a newer keystroke
        finally:
            if self._inflight is task:
                self._inflight = None
        if not text:
            return None
        self.cache.put(request.key, before, after, text)
        self.stats.suggestions += 1
        return Suggestion(text, unguided=unguided if unguided != text else None)

    async def _ask(
        self,
        request: CompletionRequest,
        setup: CompletionSetup,
        rel: str,
        lines: list[str],
        language: str | None,
        cursor: Cursor,
    ) -> tuple[str, str]:
        """Debounce, gather the context, ask the model and shape its text: (the suggestion, the model's own before
        the monitor corrected it); '' for none."""
        settings = self._settings()
        if not request.invoked and settings.completion_debounce_ms:
            await asyncio.sleep(settings.completion_debounce_ms / 1000)
        if time.monotonic() < self._resting_until:
            return "", ""
        started = time.perf_counter()
        snippets = await self._context(request, rel, lines, settings)
        log.debug(
            "completion context: %d snippets in %.0f ms",
            len(snippets),
            1000 * (time.perf_counter() - started),
        )
        redact = self.privacy.redactor(settings, request.root)
        snippets = [dataclasses.replace(s, text=redact(s.text)) for s in snippets]
        window = file_window(rel, language, lines, request.line, request.character)
        window.prefix, window.suffix = redact(window.prefix), redact(window.suffix)
        repo = request.root.name if request.root else "workspace"
        fim = FimRequest(
            "", max_tokens=settings.completion_max_tokens, temperature=settings.completion_temperature
        )
        if setup.template == "chat":
            fim.messages = chat_messages(repo, snippets, window)
        else:
            assert setup.template is not None
            if not self.stable_context_first:  # the latency benchmark's foil: the context after the cursor
                window.suffix, snippets = window.suffix + "\n" + context_comment(snippets, language), []
            fim.prompt, fim.suffix = build_prompt(setup.template, setup.model or "", repo, snippets, window)
            fim.stop = stops_for(setup.template, cursor.multiline)
        result = await self._stream(setup, fim, cursor)
        if result is None:
            return "", ""
        text = without_fence(result.text) if setup.template == "chat" else result.text
        text = finish(text, cursor, cut_short=result.finish_reason == "length")
        if text and language == "python" and settings.completion_monitor and request.root is not None:
            return await self._monitored(request, setup, rel, fim, cursor, text), text
        return text, text

    async def _monitored(
        self,
        request: CompletionRequest,
        setup: CompletionSetup,
        rel: str,
        fim: FimRequest,
        cursor: Cursor,
        text: str,
    ) -> str:
        """The suggestion with the names its receivers lack corrected (monitor.py), when the server allows it."""
        client, index, root = self._model_client(setup), self._index_for(request.path), request.root
        if not self.monitor.usable(client, setup.template) or index is None or root is None:
            return text
        workspace = self.privacy.workspace(self._settings(), index.db_path, root, self._buffers(root))
        receivers = await self.monitor.receivers(workspace, rel, request, cursor, text)

        async def rest(continued: FimRequest, lead: str) -> FimResult | None:
            return await self._stream(setup, continued, cursor, lead)

        limit = self._settings().completion_monitor_corrections
        return (
            await self.monitor.guide(text, cursor, fim, receivers, client, rest, limit) if receivers else text
        )

    async def _stream(
        self, setup: CompletionSetup, fim: FimRequest, cursor: Cursor, lead: str = ""
    ) -> FimResult | None:
        """The model's reply, closed early once the suggestion (`lead` and the reply) is complete; None when the
        model failed."""

        def enough(text: str) -> bool:
            text = lead + text
            if SPECIAL_TOKENS.search(text):
                return True
            if fim.messages is not None and text.lstrip().startswith("```"):  # a chat reply's code fence
                text = text.lstrip().split("\n", 1)[1] if "\n" in text.lstrip() else ""
            if not cursor.multiline:
                return "\n" in text
            return block_end(text, cursor) is not None

        self.stats.model_requests += 1
        try:
            result = await self._model_client(setup).stream(fim, enough)
        except asyncio.CancelledError:
            self.stats.cancelled += 1
            raise
        except CompletionModelError as exc:
            self.stats.failures += 1
            self._resting_until = time.monotonic() + MODEL_REST_SECONDS
            log.info("inline completion failed: %s", exc)
            if not self._model_down:  # one message per outage, whatever its errors say
                self._model_down = True
                self._say(f"lsp-agent: inline completions paused: {exc}", True)
            return None
        if self._model_down:
            self._model_down = False
            self._say("lsp-agent: inline completions are back", False)
        self.stats.note_answer(result.seconds, result.timings, result.usage)
        return result

    async def context(self, request: CompletionRequest) -> list[Snippet]:
        """The repository context a request's prompt would carry (before redaction), without asking the model."""
        lines = [line.removesuffix("\r") for line in request.text.split("\n")]
        rel = relative_path(request.path, request.root)
        return await self._context(request, rel, lines, self._settings())

    async def _context(
        self, request: CompletionRequest, rel: str, lines: list[str], settings: Settings
    ) -> list[Snippet]:
        """The repository context for the cursor's band of lines: gathered once (in a worker thread), reused
        while the user types on it, not waited for past CONTEXT_WAIT_SECONDS."""
        if settings.completion_context_tokens <= 0 or request.root is None:
            return []
        now = time.monotonic()
        self._contexts = {k: v for k, v in self._contexts.items() if now - v[0] < CONTEXT_TTL_SECONDS}
        band = request.line // CONTEXT_BAND_LINES
        start = band * CONTEXT_BAND_LINES
        # what the gathering reads besides the band: the lines above, imports, recent edits, the secret rules
        above = hash(tuple(lines[max(0, start - 12) : start]))
        imports = hash(tuple(line for line in lines if line.startswith(("import ", "from "))))
        edits = tuple((r.path, r.first) for r in self.edits.regions)
        slot = (request.key, band, above, imports, edits, tuple(settings.secret_files))
        if slot not in self._contexts:
            self._contexts[slot] = (now, asyncio.ensure_future(self._gather(request, rel, lines, settings)))
        try:
            return await asyncio.wait_for(asyncio.shield(self._contexts[slot][1]), CONTEXT_WAIT_SECONDS)
        except TimeoutError:
            log.info("completion context took over %.1f s; asking without it", CONTEXT_WAIT_SECONDS)
            return []
        except Exception:
            log.exception("gathering completion context failed")
            return []

    async def _gather(
        self, request: CompletionRequest, rel: str, lines: list[str], settings: Settings
    ) -> list[Snippet]:
        root = request.root
        assert root is not None
        buffers = self._buffers(root)
        secrets = self.privacy.secrets(settings)
        window = (request.line - PREFIX_LINES, request.line + SUFFIX_LINES)

        def far(region: Any) -> bool:
            same = region.path == request.path and window[0] <= region.first <= window[1]
            return same or not (region.path == root or root in region.path.parents)

        def read_open(path: Path) -> list[str] | None:
            text = buffers.get(relative_path(path, root))
            return text.split("\n") if text is not None else None

        edits = [(relative_path(p, root), first, text) for p, first, text in self.edits.shown(read_open, far)]
        tokens = settings.completion_context_tokens
        context = ContextRequest(rel, lines, request.line, tokens, edits, request.key)
        index = self._index_for(request.path)
        return await asyncio.to_thread(gather, index, context, line_reader(root, buffers), secrets.is_secret)

    def _buffers(self, root: Path) -> dict[str, str]:
        """The open documents under a workspace folder, by relative path."""
        return {relative_path(p, root): t for p, t in self._open_buffers() if p == root or root in p.parents}
