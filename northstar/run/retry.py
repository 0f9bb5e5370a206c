"""Retry is not repeat: a bounded second attempt at a step that failed for a passing reason.

The decision is a plain function over plain data (the error, the policy, whether anything
was dispatched); ``retrying`` wraps it in tenacity with bounds in attempts and in time.
A submission is retried only when it is certain nothing was sent: its failure happened
before the submitting action (its target never appeared, its page never loaded).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from northstar.errors import NavigationFailed, TargetMissing
from northstar.recipe.model import RetryPolicy

__all__ = ["is_retryable", "retrying"]


def is_retryable(error: BaseException, policy: RetryPolicy, *, dispatched: bool) -> bool:
    """Whether another attempt is safe and useful for ``error`` under ``policy``."""
    if dispatched:
        return False
    if isinstance(error, NavigationFailed):
        status = error.context.get("status")
        return "navigation" in policy.on and (status is None or int(status) >= 500)
    if isinstance(error, TargetMissing):
        return "target_missing" in policy.on
    return False


def retrying(
    policy: RetryPolicy,
    *,
    dispatched: Callable[[], bool],
    sleep: Callable[[float], Awaitable[None]],
) -> AsyncRetrying:
    """A tenacity loop bounded by ``policy``; ``dispatched`` is read at each failure."""
    return AsyncRetrying(
        stop=stop_after_attempt(policy.attempts) | stop_after_delay(policy.max_seconds),
        retry=retry_if_exception(lambda exc: is_retryable(exc, policy, dispatched=dispatched())),
        wait=wait_exponential(multiplier=0.1, max=2),
        sleep=sleep,
        reraise=True,
    )
