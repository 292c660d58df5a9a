"""The clock everything that reads the time or waits goes through: a submit's run, `wait`'s
intervals, every Beaker call's deadline (tests pass one that jumps instead of waiting:
tests/clock.py), and a command's `Bounds` on it."""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Bounds:
    """How long a command may talk to an outside service: its one deadline, a point on its
    clock, which no call starts after; and how long the service may go unreachable (or leave a
    call unanswered) before the command gives up. `runner.backends.beaker.gateway` reads it
    before every call and during every wait."""

    clock: Clock
    deadline: float | None
    """A `clock.now()` value; None: no deadline (the unreachable limit still holds)."""
    max_unreachable: float
    """Seconds (`runner.core.defaults.DEFAULT_MAX_UNREACHABLE` unless told)."""

    @classmethod
    def after(
        cls,
        clock: Clock,
        timeout: float | None,
        max_unreachable: float,
        started: float | None = None,
    ) -> Bounds:
        """The bounds of a command that started at `started` (by default now) and may take
        `timeout` seconds (None: no deadline)."""
        start = clock.now() if started is None else started
        return cls(clock, None if timeout is None else start + timeout, max_unreachable)

    def left(self) -> float | None:
        """Seconds until the deadline (0 once it passed); None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self.clock.now())
