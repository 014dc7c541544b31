"""The one retry setup of the sync and async hooks (tenacity, as Airflow's dbt Cloud hook does).

An attempt raises what went wrong: an httpx error, or the ConnectApiError decoded from an error answer (so
the error that finally surfaces carries the server's body, secrets scrubbed). Connection errors, 5xx and
409 (Connect's "rebalance in progress") are tried again with exponential backoff and jitter; anything else
surfaces at once. `ConnectHook` runs the setup with `Retrying`, `AsyncConnectHook` with `AsyncRetrying`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random_exponential,
)
from tenacity.wait import wait_base

from airflow_provider_connect.errors import ConnectApiError

T = TypeVar("T")


class Log(Protocol):
    """What the retries log to: a hook's `self.log` (a stdlib or Airflow structlog logger)."""

    def warning(self, msg: Any, /, *args: Any) -> Any: ...

    def info(self, msg: Any, /, *args: Any) -> Any: ...


def is_retryable_status(status_code: int) -> bool:
    # 409 is Connect's "rebalance in progress / conflicting operation"; 5xx includes request timeouts.
    return status_code == 409 or status_code >= 500


def is_retryable(exc: BaseException) -> bool:
    """Worth another attempt: the request may not have arrived, or the cluster was busy."""
    if isinstance(exc, httpx.TransportError):
        return True
    return isinstance(exc, ConnectApiError) and exc.status_code is not None and is_retryable_status(exc.status_code)


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a request gets, and the backoff between them."""

    max_attempts: int = 5
    initial_backoff: float = 0.5
    max_backoff: float = 10.0

    def wait(self) -> wait_base:
        """Half of min(max_backoff, initial_backoff * 2^(attempt-1)) fixed, the other half random ("equal
        jitter"): retries of many tasks spread out, and no retry comes sooner than half its backoff."""
        half, cap = self.initial_backoff / 2, self.max_backoff / 2
        return wait_exponential(multiplier=half, max=cap) + wait_random_exponential(multiplier=half, max=cap)

    def retry_args(self, log: Log, what: str, retry: bool = True) -> dict[str, Any]:
        """Keyword arguments for tenacity's `Retrying` / `AsyncRetrying` (the caller adds its `sleep`)."""
        attempts = self.max_attempts if retry else 1

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            why = f"HTTP {exc.status_code}" if isinstance(exc, ConnectApiError) else type(exc).__name__
            delay = state.next_action.sleep if state.next_action else 0.0
            log.warning("%s: %s (attempt %d/%d), retrying in %.1fs", what, why, state.attempt_number, attempts, delay)

        return {
            "stop": stop_after_attempt(attempts),
            "wait": self.wait(),
            "retry": retry_if_exception(is_retryable),
            "before_sleep": log_retry,
            "reraise": True,  # the last attempt's own error, not tenacity's RetryError
        }


def transport_error(method: str, path: str, exc: Exception, attempts: int) -> ConnectApiError:
    return ConnectApiError(method, path, None, f"{type(exc).__name__} after {attempts} attempt(s): {exc}")


def call(retrying: Retrying, method: str, path: str, attempt: Callable[[], T]) -> T:
    """Run `attempt` under `retrying`; a transport error that outlasts the retries becomes a ConnectApiError."""
    try:
        return retrying(attempt)
    except httpx.HTTPError as exc:
        raise transport_error(method, path, exc, retrying.statistics.get("attempt_number", 1)) from None


async def acall(retrying: AsyncRetrying, method: str, path: str, attempt: Callable[[], Awaitable[T]]) -> T:
    """`call` for coroutines."""
    try:
        return await retrying(attempt)
    except httpx.HTTPError as exc:
        raise transport_error(method, path, exc, retrying.statistics.get("attempt_number", 1)) from None
