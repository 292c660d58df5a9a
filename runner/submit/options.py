"""How a run is configured, and the clock it reads and waits by (tests pass one that jumps)."""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from runner.core.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_UNREACHABLE
from runner.core.retry import RetryPolicy
from runner.render.code import Code

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


@dataclass
class Options:
    root: Path
    commit: str
    concurrency: int = DEFAULT_CONCURRENCY
    deadline: float | None = None
    """A `clock.now()` value after which no new work starts and the run reports."""
    policy: RetryPolicy | None = None
    """Retries of one point; by default `RetryPolicy` sleeping on `clock`."""
    record_every: float = 0.25
    """Seconds between ledger writes during a run (each write re-reads, merges and fsyncs the
    file, ~1-2 ms, so writing once per success serialised the workers behind it)."""
    clock: Clock = field(default_factory=Clock)
    max_unreachable: float = DEFAULT_MAX_UNREACHABLE
    """Stop early once the backend has been unreachable this long (seconds)."""
    grace: float = 15.0
    """At the deadline or an early stop: how long creates in flight may still finish."""
    code: Code | None = None
    """`code:` sweeps: the commit (and repository) their experiments check out."""
    signal_grace: float = 2.0
    """After SIGINT/SIGTERM: the same, short (GitHub Actions sends SIGKILL 2.5 s after SIGTERM)."""
