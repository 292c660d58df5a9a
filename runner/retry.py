"""How a point's create is retried: which errors, how long to wait, and when to stop."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import tenacity

from runner.backends import Transient


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 8
    per_point_seconds: float = 900.0
    initial_wait: float = 1.0
    max_wait: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    """Injectable so fault tests do not sleep for real."""


class _StopWhen(tenacity.stop.stop_base):
    """Stop retrying once a condition holds (here: the run's deadline has passed)."""

    def __init__(self, condition: Callable[[], bool]) -> None:
        self.condition = condition

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.condition()


def retrying(policy: RetryPolicy, remaining: Callable[[], float | None]) -> tenacity.Retrying:
    """Retry Transient errors with jittered backoff (or the server's Retry-After), within the
    policy's bounds and never past the run's deadline (`remaining()` seconds; None: no deadline).
    """
    backoff = tenacity.wait_exponential_jitter(initial=policy.initial_wait, max=policy.max_wait)

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        delay = backoff(state)
        if isinstance(error, Transient) and error.retry_after is not None:
            delay = max(error.retry_after, 0.0)
        left = remaining()
        return delay if left is None else min(delay, left)

    def expired() -> bool:
        left = remaining()
        return left is not None and left <= 0

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(Transient),
        stop=tenacity.stop_any(
            tenacity.stop_after_attempt(policy.attempts),
            tenacity.stop_after_delay(policy.per_point_seconds),
            _StopWhen(expired),
        ),
        wait=wait,
        sleep=policy.sleep,
        reraise=True,
    )
