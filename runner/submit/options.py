"""How a run is configured, and the clock it reads and waits by (`runner.core.clock`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.core.clock import Clock
from runner.core.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_UNREACHABLE
from runner.core.retry import RetryPolicy
from runner.render.code import Code


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
