"""How calls are retried: which errors, how long to wait, and when to stop (the one place that
uses tenacity; the submit protocol and git pushes both go through it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import tenacity


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 8
    per_point_seconds: float = 900.0
    initial_wait: float = 1.0
    max_wait: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    """Injectable so fault tests do not sleep for real."""


class _Stop(tenacity.stop.stop_base):
    """A stop condition from a plain function (tenacity's typing wants a stop_base)."""

    def __init__(self, condition: Callable[[tenacity.RetryCallState], bool]) -> None:
        self.condition = condition

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.condition(retry_state)


OnRetry = Callable[[BaseException, float, int], None]
"""Told before each wait: the error, the seconds it waits, and the number of the next attempt."""


def retrying(
    policy: RetryPolicy,
    remaining: Callable[[], float | None],
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    on_retry: OnRetry | None = None,
) -> tenacity.Retrying:
    """Retry `retry_on` errors with jittered backoff (or the error's `retry_after` seconds, when
    it has one: a server's Retry-After), within the policy's bounds and never past the run's
    deadline (`remaining()` seconds; None: no deadline). `on_retry` hears of each wait.
    """
    # Exponential from initial_wait plus up to a second of jitter, capped at max_wait.
    backoff = tenacity.wait_exponential(multiplier=policy.initial_wait) + tenacity.wait_random(0, 1)

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        delay = min(backoff(state), policy.max_wait)
        asked = getattr(error, "retry_after", None)
        if isinstance(asked, (int, float)):
            delay = max(float(asked), 0.0)
        left = remaining()
        return delay if left is None else min(delay, left)

    def expired(state: tenacity.RetryCallState) -> bool:
        left = remaining()
        return left is not None and left <= 0

    def before_sleep(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        seconds = state.next_action.sleep if state.next_action else 0.0
        if on_retry is not None and error is not None:
            on_retry(error, float(seconds), state.attempt_number + 1)

    return tenacity.Retrying(
        before_sleep=before_sleep,
        retry=tenacity.retry_if_exception_type(retry_on),
        stop=tenacity.stop_any(
            tenacity.stop_after_attempt(policy.attempts),
            tenacity.stop_after_delay(policy.per_point_seconds),
            _Stop(expired),
        ),
        wait=wait,
        sleep=policy.sleep,
        reraise=True,
    )
