"""The clock everything that reads the time or waits goes through: a submit's run, `wait`'s
intervals (tests pass one that jumps instead of waiting: tests/clock.py)."""

from __future__ import annotations

import queue
import time
from typing import TypeVar

T = TypeVar("T")

POLL = 0.2
"""Longest real wait between checks of flags set by signal handlers (which must not touch locks)."""


class Clock:
    """Real time. Everything in a run that reads the time or waits goes through one of these."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def take(self, box: queue.Queue[T], timeout: float | None) -> T:
        """The next item of `box`; `queue.Empty` after `timeout` seconds, or sooner (POLL)."""
        return box.get(timeout=POLL if timeout is None else min(max(timeout, 0.0), POLL))
