"""A clock for submit runs that jumps instead of waiting, so deadline tests take no real time."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TypeVar

from runner.submit import Clock

T = TypeVar("T")


class VirtualClock(Clock):
    """Time that stands still while the run has work in hand and jumps when it only waits (as
    trio's MockClock with autojump): `take` waits `idle` real seconds for an event and, when
    none came and `jumping` is set, moves the time on by the whole timeout asked for. Sleeps
    (retry backoffs) move it on at once and are noted in `slept`."""

    def __init__(self, jumping: bool = True, idle: float = 0.05, start: float = 1000.0) -> None:
        self.jumping = jumping
        self.idle = idle
        self.slept: list[float] = []
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    def take(self, box: queue.Queue[T], timeout: float | None) -> T:
        try:
            return box.get(timeout=self.idle)
        except queue.Empty:
            if self.jumping and timeout is not None:
                self.advance(timeout)
            raise


class Scripted(VirtualClock):
    """A clock that jumps, and at each sleep plays the next scripted change (if any is left)."""

    def __init__(self, *changes: Callable[[], None]) -> None:
        super().__init__()
        self.changes = list(changes)

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        if self.changes:
            self.changes.pop(0)()
