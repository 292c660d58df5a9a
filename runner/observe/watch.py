"""Waiting for a sweep's points to end (`wait`): one look per sweep per interval, until every
awaited point has ended, one has failed (when asked to stop there) or the time is up.

Each interval makes one listing per sweep (`Observer.states`: states only, listed in as few
calls as the backend can, `Listing.FEW_CALLS`), never a call per point, and tells a `Tally`.
A recorded experiment the backend no longer has (deleted) would never end: the wait ends at
once, naming it (`Ending.GONE`).
Waiting goes through a `Clock`, so tests jump through intervals instead of sleeping. The result
is data (`Waited`); the command turns it into the final table and an exit code. On this machine
a submit records a point only once it starts, so the points it has yet to start are awaited too
(not started yet: pending), and the command reads the ledger again each interval (`again`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.backends import Backend, ExperimentState, Listing
from runner.core.clock import Clock
from runner.core.values import StrEnum
from runner.observe.looks import Context, Observer, never
from runner.observe.model import Absent, Observation, PointResult
from runner.plan import SweepPlan


class OnFailure(StrEnum):
    """What a failed point does to the wait."""

    WAIT = "wait"
    """Wait for the others all the same."""
    STOP = "stop"
    """Return at once (`--fail-fast`)."""


class Ending(StrEnum):
    """How a wait ended."""

    ALL_SUCCEEDED = "all-succeeded"
    SOME_FAILED = "some-failed"
    """Some point failed or was canceled."""
    TIMED_OUT = "timed-out"
    """The timeout came while some point was still queued or running."""
    GONE = "gone"
    """An awaited point's recorded experiment is not on the backend any more: it never ends."""


@dataclass(frozen=True)
class Timing:
    interval: float
    """Seconds between two looks."""
    timeout: float | None = None
    """Seconds after which the wait gives up; None: never."""
    on_failure: OnFailure = OnFailure.WAIT


@dataclass(frozen=True)
class Awaited:
    """A sweep, and the experiments of its points that are waited for."""

    plan: SweepPlan
    names: frozenset[str]


@dataclass(frozen=True)
class Tally:
    """The awaited points at one look: `12/40 done, 8 running, 1 failed`."""

    total: int
    done: int
    """Ended, whichever way (the failed ones too)."""
    running: int
    queued: int
    failed: int
    """Failed or canceled."""
    unstarted: int = 0
    """Not started yet: a submit on this machine has yet to start them."""

    @classmethod
    def of(cls, points: Sequence[PointResult]) -> Tally:
        states = [p.state for p in points]
        return cls(
            len(points),
            sum(isinstance(s, ExperimentState) and s.final for s in states),
            states.count(ExperimentState.RUNNING),
            states.count(ExperimentState.QUEUED),
            sum(isinstance(s, ExperimentState) and s.restartable for s in states),
            states.count(Absent.NOT_SUBMITTED),
        )

    @property
    def text(self) -> str:
        parts = [f"{self.done}/{self.total} done", f"{self.running} running"]
        parts += [f"{self.queued} queued"] if self.queued else []
        parts += [f"{self.unstarted} not started yet"] if self.unstarted else []
        parts += [f"{self.failed} failed"] if self.failed else []
        return ", ".join(parts)


@dataclass(frozen=True)
class Waited:
    ending: Ending
    sweeps: tuple[Observation, ...]
    """Each sweep at the last look, its awaited points only."""
    looks: int
    """Intervals: looks at every sweep."""

    @property
    def points(self) -> list[PointResult]:
        return [p for s in self.sweeps for p in s.points]

    @property
    def failed(self) -> list[PointResult]:
        return [
            p for p in self.points if isinstance(p.state, ExperimentState) and p.state.restartable
        ]

    @property
    def gone(self) -> list[PointResult]:
        """Those recorded but not found on the backend (deleted)."""
        return [p for p in self.points if p.state == Absent.MISSING]

    @property
    def pending(self) -> list[PointResult]:
        """Those that had not ended (queued, running, or not found)."""
        return [p for p in self.points if not _ended(p)]


def _ended(point: PointResult) -> bool:
    return isinstance(point.state, ExperimentState) and point.state.final


def look(backend: Backend, awaited: Sequence[Awaited]) -> tuple[Observation, ...]:
    """Every sweep's awaited points, from one listing each (states only)."""
    observer = Observer(backend, never, Context(listing=Listing.FEW_CALLS))
    sweeps = []
    for sweep in awaited:
        seen = observer.states(sweep.plan)
        points = tuple(p for p in seen.points if p.experiment in sweep.names)
        sweeps.append(dataclasses.replace(seen, points=points))
    return tuple(sweeps)


def wait(
    backend: Backend,
    awaited: Sequence[Awaited],
    clock: Clock,
    timing: Timing,
    told: Callable[[Tally], None],
    again: Callable[[], Sequence[Awaited]] | None = None,
) -> Waited:
    """Look every `timing.interval` until the awaited points have ended, one failed (with
    `OnFailure.STOP`), one is gone from the backend or `timing.timeout` is up; `again`: the
    awaited points as the ledger says them now, asked before each look after the first (a local
    submit records each point as it starts). Raises what the backend raises (`Transient`: it did
    not answer)."""
    deadline = None if timing.timeout is None else clock.now() + timing.timeout
    looks = 0
    while True:
        if again is not None and looks:
            awaited = again()
        sweeps = look(backend, awaited)
        looks += 1
        waited = Waited(Ending.TIMED_OUT, sweeps, looks)
        told(Tally.of(waited.points))
        if waited.gone:
            return dataclasses.replace(waited, ending=Ending.GONE)
        failed = bool(waited.failed)
        if not waited.pending or (failed and timing.on_failure is OnFailure.STOP):
            ending = Ending.SOME_FAILED if failed else Ending.ALL_SUCCEEDED
            return dataclasses.replace(waited, ending=ending)
        left = None if deadline is None else deadline - clock.now()
        if left is not None and left <= 0:
            return waited
        clock.sleep(timing.interval if left is None else min(timing.interval, left))
