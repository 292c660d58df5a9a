"""The lab as a discrete-event simulation: GPUs, Beaker's queue, the workflows' schedules and
the reviewers, on a virtual clock (minutes from the moment the reviewed envelope is merged and
its first points created) driven by a heap of events.

- Each point is one experiment of one GPU. Created by a Submit run, it may be placed after a
  queue delay (exponential, mean `Lab.queue`: scheduling, image pull), then waits first in
  first out for a free GPU, then runs for its share of the full budget's run time
  (`Lab.full`) times a log-normal factor of mean 1 (`Lab.sigma`). The delay and the factor are
  drawn from the seed and the point itself, so a point takes the same time in every strategy.
- Submit runs every `Lab.submit_every` minutes (`*/15 * * * *` in submit.yml); Propose at
  minute `Lab.propose_at` of every hour (`17 * * * *` in propose.yml).
- A search that steps by pull request (`Mode.REVIEWED`): each Propose run asks the search for
  its next step (unless its pull request is still open); a step with points opens a pull
  request, merged `Lab.review` later; the merge's push starts Submit, which creates them
  (`Lab.submit_on_merge`; otherwise the next scheduled Submit does).
- `advance: auto` (`Mode.AUTO`): each Submit run asks the search for its next step and creates
  its points in the same run; no pull request.

A search is asked with what Beaker would show: every point created so far, pending until it
ends, then done with its metric (nothing fails here).
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from runner.core.model import Cell
from runner.core.sample import row_identity
from runner.core.values import StrEnum
from runner.search.points import Result, Told

HOUR = 60.0


@dataclass(frozen=True)
class Lab:
    gpus: int = 16
    queue: float = 15.0
    full: float = 8 * HOUR
    """The mean run time of a point at the full budget."""
    sigma: float = 0.5
    submit_every: float = 15.0
    propose_at: float = 17.0
    propose_every: float = HOUR
    review: float = 4 * HOUR
    submit_on_merge: bool = True
    promoted_first: bool = False
    """Beaker places a waiting point of a higher rung before one of a lower (a priority per
    rung); by default every point waits its turn."""
    horizon: float = 5000 * HOUR
    """A search still running then is a bug of the lab or of the search (RuntimeError)."""


class Mode(StrEnum):
    REVIEWED = "a pull request per step"
    AUTO = "advance: auto"


@dataclass(frozen=True)
class Point:
    """A point a search asks for: its row as observed, its share of the full budget, the
    metric it will end with (the lab knows it; the search learns it when it ends) and its rung
    (0 for a search without rungs)."""

    row: tuple[Cell, ...]
    share: float
    value: float
    rung: int = 0


class Search(Protocol):
    """A search as the lab drives it: its first points (the reviewed envelope's), then a step
    from what is observed (new points; none while it waits), until `done`."""

    def first(self) -> list[Point]: ...

    def step(self, observed: Sequence[Told]) -> list[Point]: ...

    @property
    def done(self) -> bool: ...


@dataclass
class Job:
    """A point's experiment and what happened to it (times in minutes)."""

    point: Point
    key: str
    created: float
    eligible: float
    duration: float
    gpu: int = -1
    started: float = math.nan
    ended: float = math.nan

    @property
    def live(self) -> bool:
        return math.isnan(self.ended)


@dataclass(frozen=True)
class Review:
    """A step's pull request: opened by Propose, merged by a person."""

    opened: float
    merged: float
    points: int


@dataclass(frozen=True)
class Run:
    """One search through the lab."""

    jobs: tuple[Job, ...]
    reviews: tuple[Review, ...]
    clock: tuple[float, ...]
    """The time of every event, in the order handled."""
    runs: tuple[tuple[float, int], ...]
    """Each Submit run that created points: its time and how many."""

    @property
    def human_actions(self) -> int:
        """The envelope's review and merge, and one per step's pull request."""
        return 1 + len(self.reviews)

    @property
    def end(self) -> float:
        return max(j.ended for j in self.jobs)


class _Kind(IntEnum):
    """What happens; at the same instant in this order (a run sees the points that just ended)."""

    END = 0
    ELIGIBLE = 1
    MERGE = 2
    SUBMIT = 3
    PROPOSE = 4


@dataclass
class _World:
    lab: Lab
    search: Search
    mode: Mode
    seed: int
    now: float = 0.0
    jobs: list[Job] = field(default_factory=list)
    events: list[tuple[float, int, int, Job | None]] = field(default_factory=list)
    waiting: list[tuple[int, float, int, Job]] = field(default_factory=list)
    free: list[int] = field(default_factory=list)
    staged: list[Point] = field(default_factory=list)
    """Merged, for the next Submit run."""
    reviewing: list[Point] = field(default_factory=list)
    """The open pull request's points."""
    reviews: list[Review] = field(default_factory=list)
    clock: list[float] = field(default_factory=list)
    runs: list[tuple[float, int]] = field(default_factory=list)
    open_review: bool = False
    order: int = 0

    def at(self, time: float, kind: _Kind, job: Job | None = None) -> None:
        self.order += 1
        heapq.heappush(self.events, (time, kind, self.order, job))

    def create(self, points: Sequence[Point]) -> None:
        """A Submit run creates these points now."""
        for point in points:
            key = row_identity(point.row)
            draws = random.Random(f"{self.seed}/{key}")
            delay = draws.expovariate(1 / self.lab.queue) if self.lab.queue > 0 else 0.0
            sigma = self.lab.sigma
            factor = draws.lognormvariate(-sigma * sigma / 2, sigma) if sigma > 0 else 1.0
            job = Job(point, key, self.now, self.now + delay, self.lab.full * point.share * factor)
            self.jobs.append(job)
            self.at(job.eligible, _Kind.ELIGIBLE, job)
        if points:
            self.runs.append((self.now, len(points)))

    def place(self) -> None:
        """Free GPUs take waiting points, first come first served (by rung first when the lab
        gives promoted points priority)."""
        while self.free and self.waiting:
            *_, job = heapq.heappop(self.waiting)
            job.gpu, job.started = heapq.heappop(self.free), self.now
            self.at(self.now + job.duration, _Kind.END, job)

    def observed(self) -> list[Told]:
        return [
            Told(j.point.row, Result.PENDING, None, j.key, j.key)
            if j.live
            else Told(j.point.row, Result.DONE, j.point.value, j.key, j.key)
            for j in self.jobs
        ]

    def handle(self, kind: _Kind, job: Job | None) -> None:
        if kind is _Kind.ELIGIBLE and job is not None:
            priority = -job.point.rung if self.lab.promoted_first else 0
            self.order += 1
            heapq.heappush(self.waiting, (priority, job.eligible, self.order, job))
        elif kind is _Kind.END and job is not None:
            job.ended = self.now
            heapq.heappush(self.free, job.gpu)
        elif kind is _Kind.SUBMIT:
            self.submit()
        elif kind is _Kind.PROPOSE:
            self.propose()
        elif kind is _Kind.MERGE:
            self.open_review = False
            self.staged += self.reviewing
            if self.lab.submit_on_merge:
                self.create(self.staged)
                self.staged = []
        self.place()

    def submit(self) -> None:
        if self.mode is Mode.AUTO and not self.search.done:
            self.create(self.search.step(self.observed()))
        elif self.staged:
            self.create(self.staged)
            self.staged = []
        if not self.finished:
            self.at(self.now + self.lab.submit_every, _Kind.SUBMIT)

    def propose(self) -> None:
        if not self.open_review and not self.search.done:
            new = self.search.step(self.observed())
            if new:
                self.open_review, self.reviewing = True, list(new)
                self.reviews.append(Review(self.now, self.now + self.lab.review, len(new)))
                self.at(self.now + self.lab.review, _Kind.MERGE)
        if not self.finished:
            self.at(self.now + self.lab.propose_every, _Kind.PROPOSE)

    @property
    def finished(self) -> bool:
        """Nothing more will happen: the search has no next step, nothing waits for a review
        or a Submit run, and every point has ended."""
        idle = not self.open_review and not self.staged
        return self.search.done and idle and not any(j.live for j in self.jobs)


def simulate(lab: Lab, search: Search, mode: Mode, seed: int) -> Run:
    """One search through the lab, from the envelope's merge (its first points created at 0)
    until its last point ends."""
    world = _World(lab, search, mode, seed, free=list(range(lab.gpus)))
    world.create(search.first())
    world.at(lab.submit_every, _Kind.SUBMIT)
    if mode is Mode.REVIEWED:
        world.at(lab.propose_at, _Kind.PROPOSE)
    while world.events and not world.finished:
        time, kind, _, job = heapq.heappop(world.events)
        if time < world.now:
            raise RuntimeError(f"the clock went back from {world.now} to {time}")
        if time > lab.horizon:
            raise RuntimeError(f"the search is still running after {lab.horizon / HOUR:g} h")
        world.now = time
        world.clock.append(time)
        world.handle(_Kind(kind), job)
    return Run(tuple(world.jobs), tuple(world.reviews), tuple(world.clock), tuple(world.runs))
