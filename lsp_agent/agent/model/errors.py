"""Model request failures sorted into permanent and transient ones, each with a message a user can act on."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

from lsp_agent.agent.model.litellm_loader import get_litellm

PERMANENT_KINDS = ("auth", "model", "bad_request", "context", "malformed", "error")
TRANSIENT_KINDS = ("connect", "timeout", "dropped", "rate_limit", "server", "transient")
# The "SomeError: message" line that ends a traceback embedded in an error message.
_RAISED_RE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")


class ModelError(Exception):
    """A model request that failed; `transient` says whether trying again may help, `kind` what went wrong."""

    def __init__(
        self,
        message: str,
        *,
        kind: str = "error",
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.transient = transient
        self.retry_after = retry_after  # seconds the provider asked us to wait (Retry-After), if it said


def classify_error(exc: BaseException, model: str, api_base: str | None = None) -> ModelError:
    """A ModelError saying whether the failure is worth retrying and what the user can do."""
    if isinstance(exc, ModelError):
        return exc
    litellm = get_litellm()
    text = short_message(exc)
    where = api_base or f"the {model.split('/', 1)[0]} API"
    if _missing_credentials(text):
        return ModelError(
            f"no API key for {model}: pass --api-key, set LSP_AGENT_API_KEY or the provider's key variable "
            "(e.g. OPENAI_API_KEY). A local OpenAI-compatible server that needs no key only needs --api-base.",
            kind="auth",
        )
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ModelError(
            f"the conversation no longer fits the context window of {model}: {text}", kind="context"
        )
    if isinstance(exc, litellm.AuthenticationError):
        return ModelError(
            f"authentication failed for {model}: {text}. Check the API key (--api-key, LSP_AGENT_API_KEY or the "
            "provider's key variable such as OPENAI_API_KEY / ANTHROPIC_API_KEY).",
            kind="auth",
        )
    if isinstance(exc, litellm.PermissionDeniedError):
        return ModelError(f"the provider refused access to {model}: {text}", kind="auth")
    if isinstance(exc, litellm.NotFoundError):
        return ModelError(
            f"model {model} was not found at {where}: {text}. Check the model name and --api-base.",
            kind="model",
        )
    malformed = _malformed_body(exc, text)
    if malformed is not None:
        return ModelError(
            f"the model server at {where} sent a reply that is not a valid chat completion ({malformed}). "
            "Check that --api-base points at an OpenAI-compatible endpoint (usually ending in /v1).",
            kind="malformed",
        )
    return _transient_or_other(exc, litellm, text, model, where)


def _transient_or_other(exc: BaseException, litellm: Any, text: str, model: str, where: str) -> ModelError:
    """The retryable failures (connection, timeout, rate limit, server errors), else a permanent one."""
    chain = list(exception_chain(exc))
    if any(isinstance(e, ConnectionRefusedError) or _named(e, "ConnectError") for e in chain):
        return ModelError(
            f"could not connect to the model server at {where} (connection refused): the server may not be "
            "running; start it or check --api-base",
            kind="connect",
            transient=True,
        )
    if isinstance(exc, litellm.Timeout | asyncio.TimeoutError):
        return ModelError(f"the model server at {where} timed out: {text}", kind="timeout", transient=True)
    if isinstance(exc, litellm.RateLimitError) or getattr(exc, "status_code", None) == 429:
        return ModelError(
            f"rate limited by {where}: {text}",
            kind="rate_limit",
            transient=True,
            retry_after=retry_after(exc),
        )
    dropped = ("RemoteProtocolError", "ReadError", "ServerDisconnectedError", "ClientOSError")
    if (
        any(isinstance(e, ConnectionError) or _named(e, *dropped) for e in chain)
        or text == "Connection error."
    ):
        return ModelError(
            f"the connection to the model server at {where} was dropped ({text})",
            kind="dropped",
            transient=True,
        )
    if isinstance(exc, litellm.BadRequestError):
        if "LLM Provider NOT provided" in str(exc):
            return ModelError(
                f"litellm does not know how to reach {model!r}: prefix the model with its provider, e.g. "
                "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder",
                kind="model",
            )
        return ModelError(f"the provider rejected the request for {model}: {text}", kind="bad_request")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status in (408, 409)):
        return ModelError(
            f"the model server at {where} failed ({status}): {text}",
            kind="server",
            transient=True,
            retry_after=retry_after(exc),
        )
    if isinstance(exc, litellm.APIConnectionError) or type(exc).__module__.startswith(
        ("httpx", "httpcore", "aiohttp")
    ):
        return ModelError(
            f"could not talk to the model server at {where}: {text}", kind="dropped", transient=True
        )
    return ModelError(f"model request failed: {type(exc).__name__}: {text}", kind="error")


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and those it was raised from or during, innermost last."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _named(exc: BaseException, *names: str) -> bool:
    """True when the exception's class (or a base class) has one of these names."""
    return any(cls.__name__ in names for cls in type(exc).__mro__)


def _missing_credentials(text: str) -> bool:
    """True for the OpenAI client's refusal to send a request without a key."""
    return "Missing credentials" in text or "api_key client option must be set" in text


def _malformed_body(exc: BaseException, text: str) -> str | None:
    """What was wrong with a response body that could not be read as a completion, or None."""
    for inner in exception_chain(exc):
        if isinstance(inner, json.JSONDecodeError):
            return f"the body is not JSON: {inner.msg} at line {inner.lineno} column {inner.colno}"
    raw = str(exc)
    if "Invalid response object" in raw or re.search(
        r"Expecting (value|property name)|Unterminated string", raw
    ):
        return text
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header on the error's HTTP response, if there is one."""
    for inner in exception_chain(exc):
        for headers in (
            getattr(inner, "litellm_response_headers", None),
            getattr(getattr(inner, "response", None), "headers", None),
        ):
            seconds = _seconds_from_headers(headers)
            if seconds is not None:
                return seconds
    return None


def _seconds_from_headers(headers: Any) -> float | None:
    """Retry-After as seconds (a number; an HTTP date is not used by model providers)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        value = headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def short_message(exc: BaseException) -> str:
    """An exception's message on one line: no litellm class prefixes, no embedded traceback, cut to 500 chars."""
    raw = str(exc) or type(exc).__name__
    if "Traceback (most recent call last)" in raw:
        head, _, trace = raw.partition("Traceback (most recent call last)")
        raised = [line.strip() for line in trace.splitlines() if _RAISED_RE.match(line)]
        raw = f"{head.strip()}: {raised[-1]}" if raised else head
    if "Exception - " in raw:
        raw = raw.split("Exception - ", 1)[1]
    text = re.sub(r"^(litellm\.)?\w+Error: (\w+Error: )?", "", raw)
    text = " ".join(text.split())
    return text if len(text) <= 500 else text[:497] + "..."
