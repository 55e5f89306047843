"""The retry policy of model requests (on tenacity): exponential backoff, Retry-After, attempt and time limits."""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from lsp_agent.agent.model.errors import ModelError

T = TypeVar("T")

RETRY_AFTER_CAP = 60.0  # never wait longer than this for a provider's Retry-After
# Fewer retries for failures that rarely pass by themselves: a refused connection (the server may be starting,
# or not running at all) and a whole-request timeout (each attempt already cost requestTimeout seconds).
RETRIES_BY_KIND = {"connect": 2, "timeout": 1}


@dataclass
class RetryPolicy:
    """How often and how long to retry a transient model failure."""

    max_retries: int = 4
    base: float = 1.0
    cap: float = 30.0
    retry_after_cap: float = RETRY_AFTER_CAP

    def delay(self, attempt: int, error: ModelError) -> float:
        """Seconds to wait after failed attempt number `attempt`: backoff with jitter, at least Retry-After."""
        delay = min(self.cap, self.base * 2 ** (attempt - 1))
        delay += random.uniform(0, delay / 10)
        if error.retry_after is not None:
            delay = max(delay, min(error.retry_after, self.retry_after_cap))
        return delay

    def limit(self, error: ModelError) -> int:
        """The number of retries allowed for this kind of failure."""
        return min(self.max_retries, RETRIES_BY_KIND.get(error.kind, self.max_retries))


class _Stop:
    """tenacity's stop condition; remembers why it stopped so the final message can say so."""

    def __init__(self, policy: RetryPolicy, deadline: float | None) -> None:
        self.policy = policy
        self.deadline = deadline
        self.reason = ""

    def __call__(self, state: RetryCallState) -> bool:
        error = state.outcome.exception() if state.outcome else None
        assert isinstance(error, ModelError)
        if state.attempt_number > self.policy.limit(error):
            self.reason = f"gave up after {state.attempt_number} attempts"
        elif error.retry_after is not None and error.retry_after > self.policy.retry_after_cap:
            self.reason = (
                f"the server asks to wait {error.retry_after:.0f} s (Retry-After), longer than the "
                f"{self.policy.retry_after_cap:.0f} s this client waits"
            )
        elif self.deadline is not None and time.monotonic() + state.upcoming_sleep >= self.deadline:
            self.reason = (
                f"no time left for a retry within the run's deadline (after {state.attempt_number} attempts)"
            )
        else:
            return False
        return True


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    deadline: float | None = None,
    on_retry: Callable[[int, float, ModelError], None] | None = None,
) -> tuple[T, int]:
    """(result, attempts) of `attempt`, retried on transient ModelErrors; raises the final ModelError."""
    stop = _Stop(policy, deadline)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        assert isinstance(error, ModelError)
        return policy.delay(state.attempt_number, error)

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        if on_retry is not None and isinstance(error, ModelError):
            on_retry(state.attempt_number, state.upcoming_sleep, error)

    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda exc: isinstance(exc, ModelError) and exc.transient),
        wait=wait,
        stop=stop,
        before_sleep=before_sleep,
        reraise=True,
    )
    tries = 0
    try:
        async for state in retrying:
            with state:
                tries = state.retry_state.attempt_number
                return await attempt(), tries
    except ModelError as error:
        if not error.transient:
            raise
        raise ModelError(f"{error} ({stop.reason})", kind=error.kind) from None
    raise AssertionError("unreachable: tenacity either returns or raises")
