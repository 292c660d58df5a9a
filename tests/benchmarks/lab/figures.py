"""What the lab measures of a run: when the reviewed search's best is reached, the GPU-hours
spent until then, and the medians over seeds.

Reached, precisely: the target is the loss of the point the reviewed synchronous search ends on
(a halving: the one point of its last rung; TPE: its best point of all); another search of the
same seed reaches it at the first moment one of its points *at the full budget* ends with a loss
at most the target (a run of the same configuration to the same budget ends with the same
loss, so reaching the same configuration counts, and so does a better one). The wall time is
that moment, counted from the creation of the first points (the envelope's merge); the GPU-hours
are every GPU's busy time up to that moment (a point still running then counts up to it). A
search that never reaches it counts as infinitely slow and costly, so a median over seeds is
the median of all seeds, not of the lucky ones.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tests.benchmarks.lab.world import HOUR, Run


@dataclass(frozen=True)
class Reach:
    """One search of one seed against its reviewed search's target."""

    wall: float
    """Hours until the target was reached (infinite: never)."""
    gpu: float
    """GPU-hours until then (infinite: never)."""
    humans: int
    end: float
    """Hours until its last point ended."""
    spent: float
    """GPU-hours of the whole search."""

    @property
    def reached(self) -> bool:
        return math.isfinite(self.wall)


def target(run: Run) -> float:
    """The loss of the point a search ends on: its best at the full budget."""
    return min(j.point.value for j in run.jobs if j.point.share == 1)


def reached_at(run: Run, goal: float) -> float:
    """Minutes until a point at the full budget ended with a loss at most `goal` (inf: never)."""
    return min(
        (j.ended for j in run.jobs if j.point.share == 1 and j.point.value <= goal),
        default=math.inf,
    )


def busy(run: Run, until: float) -> float:
    """GPU-hours of every point's run up to `until` (minutes)."""
    started = [j for j in run.jobs if not math.isnan(j.started) and j.started < until]
    return sum(min(j.ended, until) - j.started for j in started) / HOUR


def reach(run: Run, goal: float) -> Reach:
    at = reached_at(run, goal)
    gpu = busy(run, at) if math.isfinite(at) else math.inf
    return Reach(at / HOUR, gpu, run.human_actions, run.end / HOUR, busy(run, run.end))


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def ratios(found: Sequence[Reach], reviewed: Sequence[Reach]) -> tuple[float, float]:
    """The medians over seeds of each seed's wall-time and GPU-hours ratio to its reviewed
    search's (infinite where it was never reached)."""
    walls, gpus = paired(found, reviewed)
    return median(walls), median(gpus)


def paired(found: Sequence[Reach], reviewed: Sequence[Reach]) -> tuple[list[float], list[float]]:
    """Each seed's wall-time and GPU-hours ratio to its reviewed search's."""
    walls = [f.wall / r.wall for f, r in zip(found, reviewed, strict=True)]
    gpus = [f.gpu / r.gpu for f, r in zip(found, reviewed, strict=True)]
    return walls, gpus


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """The first and third quartiles, by nearest rank (so that an infinite value stays one)."""
    ordered = sorted(values)
    last = len(ordered) - 1
    return ordered[round(0.25 * last)], ordered[round(0.75 * last)]


def spread(values: Sequence[float]) -> str:
    """`1.14× (1.00–1.25)`: the median and the quartiles of ratios."""
    q1, q3 = quartiles(values)
    return f"{median(values):.2f}× ({q1:.2f}–{q3:.2f})"


def hours(value: float) -> str:
    return "never" if math.isinf(value) else f"{value:.1f} h"
